#pragma once

#include <re2/set.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

namespace switchyard::answers {

// A regular expression from a JSON Schema (`pattern`, a `patternProperties` name): ECMA-262
// syntax, run by RE2. Matching uses RE2's DFA alone (an RE2::Set of one), never its NFA or a
// backtracker: time is linear in the text, with a per-byte cost that grows with the compiled
// program (a new DFA state is built from it), and memory is capped at kMemoryBytes. Immutable;
// RE2 makes Find safe to call from many threads at once.
class SchemaPattern final {
  public:
    // RE2's memory for one pattern: its program and its DFA's state cache (the cache is flushed
    // and rebuilt when full).
    static constexpr std::int64_t kMemoryBytes = 256 << 10;

    enum class Found { kYes, kNo, kOutOfMemory };

    // The compiled pattern, or why RE2 cannot run it: syntax RE2 lacks (lookaround,
    // backreferences), or a program larger than kMemoryBytes allows.
    static std::variant<std::unique_ptr<const SchemaPattern>, std::string> Compile(
        std::string_view source);

    // ECMA-262 `RegExp.prototype.test` semantics, as JSON Schema asks: whether the expression
    // matches anywhere in `text` (unanchored; `^` and `$` anchor at the ends of the text).
    // kOutOfMemory: not one DFA state fits in the memory (not seen in practice).
    Found Find(std::string_view text) const;

    // What Find costs on `bytes` bytes of text, in validation steps (json_schema.h).
    std::size_t Cost(std::size_t bytes) const;

    const std::string& source() const { return source_; }

  private:
    SchemaPattern(std::string source, int program_size, std::unique_ptr<RE2::Set> set)
        : source_(std::move(source)), program_size_(program_size), set_(std::move(set)) {}

    std::string source_;
    int program_size_;
    std::unique_ptr<RE2::Set> set_;
};

}  // namespace switchyard::answers
