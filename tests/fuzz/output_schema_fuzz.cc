// A client's JSON Schema compiled and applied to an answer (docs/answers.md#output-validation):
// never a crash, an abort or a hang, and the verdicts agree with themselves. The input is the
// schema, a NUL (or, when there is none, a newline), and the answer. Oracles, besides surviving:
//  - checking twice gives the same verdict, problem text included;
//  - a verdict carries a problem exactly when it is not kPassed;
//  - {"not": S} gives the opposite of S, and {"allOf": [S, S]} the same, whenever neither is
//    skipped. Wrapping moves S below a new root, which changes what `#...` references inside it
//    name, so these two hold only for schemas without "$ref".
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "answers/json_schema.h"
#include "answers/output_schema.h"
#include "core/json.h"

using namespace switchyard;
using Result = answers::SchemaVerdict::Result;

namespace {

// Small enough that the slowest schema runs in well under a millisecond.
constexpr std::size_t kSteps = 20'000;

void ExpectConsistent(const answers::SchemaVerdict& verdict) {
    if ((verdict.result == Result::kPassed) != verdict.problem.empty()) std::abort();
}

// The verdict of `schema` on `document`, checked twice; nullopt when `schema` does not compile.
std::optional<answers::SchemaVerdict> Verdict(const boost::json::value& schema,
                                              const boost::json::value& document) {
    auto compiled = answers::JsonSchema::Compile(schema);
    const auto* ok = std::get_if<answers::JsonSchema>(&compiled);
    if (ok == nullptr) {
        if (std::get<std::string>(compiled).empty()) std::abort();  // a refusal says why
        return std::nullopt;
    }
    answers::SchemaVerdict verdict = ok->Validate(document, kSteps);
    const answers::SchemaVerdict again = ok->Validate(document, kSteps);
    if (again.result != verdict.result || again.problem != verdict.problem) std::abort();
    ExpectConsistent(verdict);
    return verdict;
}

// Whether a "$ref" keyword appears anywhere in `value` (however its text was escaped).
bool HasReference(const boost::json::value& value) {
    if (const auto* object = value.if_object()) {
        for (const auto& member : *object) {
            if (member.key() == "$ref" || HasReference(member.value())) return true;
        }
    } else if (const auto* array = value.if_array()) {
        for (const auto& item : *array) {
            if (HasReference(item)) return true;
        }
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    std::size_t split = input.find('\0');
    if (split == std::string_view::npos) split = input.find('\n');
    if (split == std::string_view::npos) return 0;
    const std::string_view schema_text = input.substr(0, split);
    const std::string_view answer = input.substr(split + 1);

    boost::system::error_code ec;
    const boost::json::value schema = core::ParseJson(schema_text, ec);
    if (ec) return 0;
    auto compiled = answers::OutputSchema::Compile(schema);
    const auto* output_schema =
        std::get_if<std::shared_ptr<const answers::OutputSchema>>(&compiled);
    if (output_schema == nullptr) return 0;
    const answers::SchemaVerdict checked = (*output_schema)->Check(answer, {.max_steps = kSteps});
    ExpectConsistent(checked);

    const boost::json::value document = core::ParseJson(answer, ec);
    if (ec) {
        if (checked.problem != "the answer is not JSON") std::abort();
        return 0;
    }
    const std::optional<answers::SchemaVerdict> direct = Verdict(schema, document);
    if (!direct || direct->result != checked.result || direct->problem != checked.problem) {
        std::abort();  // the text path and the document path disagree
    }
    if (direct->result == Result::kSkipped || HasReference(schema)) return 0;
    const auto negated = Verdict(boost::json::object{{"not", schema}}, document);
    if (negated && negated->result != Result::kSkipped &&
        (negated->result == Result::kPassed) == (direct->result == Result::kPassed)) {
        std::abort();
    }
    const auto twice =
        Verdict(boost::json::object{{"allOf", boost::json::array{schema, schema}}}, document);
    if (twice && twice->result != Result::kSkipped && twice->result != direct->result) {
        std::abort();
    }
    return 0;
}
