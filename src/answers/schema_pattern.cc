#include "answers/schema_pattern.h"

#include <re2/re2.h>

#include "answers/json_values.h"
#include "core/hex.h"

namespace switchyard::answers {
namespace {

// Cost model for Find, measured with RE2 2022-06-01 on 100 KB texts: a DFA whose states are
// cached runs at ~2 ns a byte; one that builds a state at each byte (`(a|aa|b|ab){1,200}c` on
// "aaaa...", a 3,000-instruction program) at ~0.02 ns per instruction per byte. With a step worth
// ~100 ns: (kBaseInstructions + program size) instructions per byte, kInstructionBytesPerStep of
// them to the step.
constexpr std::size_t kBaseInstructions = 100;
constexpr std::size_t kInstructionBytesPerStep = 2048;

bool IsHex4(std::string_view text) {
    if (text.size() < 4) return false;
    for (int i = 0; i < 4; ++i) {
        if (core::HexValue(text[i]) < 0) return false;
    }
    return true;
}

// RE2 reads Perl syntax. Two ECMA-262 spellings that schemas use are rewritten to it: `\uXXXX`
// (RE2: `\x{XXXX}`) and named groups `(?<name>...)` (RE2 2022: `(?P<name>...)`). Lookaround and
// backreferences have no rewrite: RE2 refuses them, and with them the schema.
std::string ToRe2Syntax(std::string_view ecma) {
    std::string out;
    out.reserve(ecma.size() + 8);
    bool in_class = false;
    for (std::size_t i = 0; i < ecma.size(); ++i) {
        const char c = ecma[i];
        if (c == '\\' && i + 1 < ecma.size()) {
            if (ecma[i + 1] == 'u' && IsHex4(ecma.substr(i + 2))) {
                out.append("\\x{").append(ecma.substr(i + 2, 4)).append("}");
                i += 5;
            } else {
                out.append(ecma.substr(i, 2));
                ++i;
            }
            continue;
        }
        if (in_class) {
            in_class = c != ']';
        } else if (c == '[') {
            in_class = true;
        } else if (ecma.substr(i).starts_with("(?<") && i + 3 < ecma.size() && ecma[i + 3] != '=' &&
                   ecma[i + 3] != '!') {
            out.append("(?P<");
            i += 2;
            continue;
        }
        out.push_back(c);
    }
    return out;
}

}  // namespace

std::variant<std::unique_ptr<const SchemaPattern>, std::string> SchemaPattern::Compile(
    std::string_view source) {
    const std::string translated = ToRe2Syntax(source);
    RE2::Options options;
    options.set_encoding(RE2::Options::EncodingUTF8);
    options.set_max_mem(kMemoryBytes);
    options.set_log_errors(false);
    options.set_never_capture(true);
    // A plain RE2 reads the syntax (with an error that says what is wrong) and measures the
    // program; only the set, which matches by DFA alone, is kept.
    const RE2 probe(translated, options);
    if (!probe.ok()) return "pattern " + ShortQuoted(source) + ": " + probe.error();
    auto set = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
    std::string error;
    if (set->Add(translated, &error) < 0) return "pattern " + ShortQuoted(source) + ": " + error;
    if (!set->Compile()) {
        return "pattern " + ShortQuoted(source) + " needs more than " +
               std::to_string(kMemoryBytes >> 10) + " KiB";
    }
    return std::unique_ptr<const SchemaPattern>(
        new SchemaPattern(std::string(source), probe.ProgramSize(), std::move(set)));
}

SchemaPattern::Found SchemaPattern::Find(std::string_view text) const {
    RE2::Set::ErrorInfo error{RE2::Set::kNoError};
    if (set_->Match(text, nullptr, &error)) return Found::kYes;
    return error.kind == RE2::Set::kNoError ? Found::kNo : Found::kOutOfMemory;
}

std::size_t SchemaPattern::Cost(std::size_t bytes) const {
    const std::size_t instructions = kBaseInstructions + static_cast<std::size_t>(program_size_);
    return 1 + bytes * instructions / kInstructionBytesPerStep;
}

}  // namespace switchyard::answers
