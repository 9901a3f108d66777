#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <variant>

namespace switchyard::answers {

struct SchemaTree;  // schema_tree.h

// What checking one document against a schema found.
struct SchemaVerdict {
    enum class Result {
        kPassed,
        kFailed,
        // The check stopped before it could decide: the work it needed is over its bound (the
        // step budget, the nesting of schemas on the document, or a pattern's memory). Says
        // nothing about the document.
        kSkipped,
    };
    Result result = Result::kPassed;
    // kFailed: where and what, e.g. `<root>.tags[0]: is not one of the enum's 2 values` (the first
    // problem found; inside anyOf/oneOf the deepest one, when a branch got further than the
    // combinator itself). kSkipped: why. Empty when passed.
    std::string problem;
};

// A JSON Schema compiled into an immutable tree: draft 7 keywords, draft 4's boolean
// exclusiveMaximum/exclusiveMinimum, draft 2019's `$defs` beside `definitions`, local `$ref`s
// (`#`, `#/json/pointer` with ~0 and ~1 escapes; percent escapes are not decoded) resolved at
// compile time. Unknown keywords are annotations and ignored; `format` checks date, time and
// date-time (RFC 3339) and passes every other format. `pattern` and `patternProperties` are
// ECMA-262 expressions run by RE2's DFA: linear in the text, never backtracking, each pattern's
// memory bounded.
//
// Every check is bounded: each schema applied to each value is one step, and every other piece of
// work (a pattern match, an enum/const comparison, uniqueItems, a string's length) is charged in
// steps in proportion to the bytes or items it touches, calibrated so one step is at most ~0.1 µs
// of one core on the worst inputs measured (typical steps are far cheaper). A check that would
// need more steps than it is given, or more than kMaxCheckDepth schemas applied one inside
// another, stops and reports kSkipped: work and stack are bounded for every schema and document,
// a `$ref` graph that fans out exponentially included.
//
// Immutable after Compile and shareable across threads: Validate is const and keeps its state on
// the caller's stack. Copies share the tree.
class JsonSchema final {
  public:
    // How many schemas a check may apply one inside another (one recursion each): documents are
    // at most core::kMaxJsonDepth deep, and `$ref`s, allOf, anyOf... add to that. A level takes
    // up to ~1 KiB of stack in an optimised build (measured through properties, anyOf and oneOf),
    // so a check needs up to ~1 MiB: run it on a thread with a default-sized stack.
    static constexpr std::size_t kMaxCheckDepth = 1024;

    // The compiled schema, or why `schema` is none this validator can apply: not an object or a
    // boolean; a keyword with a value of the wrong kind; a `$ref` that is not local or names
    // nothing; `$id` below the root; a pattern RE2 cannot compile (lookaround, backreferences) or
    // that needs more than its memory, or more than 128 distinct patterns (32 MiB); schemas that
    // apply to the same value without end (`$ref`
    // to itself, `allOf` back to an ancestor), or chains of them deeper than 256; a schema nested
    // deeper than core::kMaxJsonDepth. Compiling is linear in the size of `schema` (each pattern
    // bounded by its memory).
    static std::variant<JsonSchema, std::string> Compile(const boost::json::value& schema);

    // Checks `document`, spending at most `max_steps` steps (see above).
    SchemaVerdict Validate(const boost::json::value& document, std::size_t max_steps) const;

  private:
    explicit JsonSchema(std::shared_ptr<const SchemaTree> tree) : tree_(std::move(tree)) {}

    std::shared_ptr<const SchemaTree> tree_;
};

}  // namespace switchyard::answers
