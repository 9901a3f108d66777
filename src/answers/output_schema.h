#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "answers/json_schema.h"

namespace switchyard::answers {

// Bounds on checking one answer (json_schema.h says what a step is). At the defaults a realistic
// answer passes far inside them — measured: a 330 KB answer of 3,000 records, each checked by ~35
// schemas (types, patterns, a date-time, an enum, uniqueItems), takes ~102,000 steps and ~1.5 ms
// — while the worst schema and answer found stop after ~0.1 s of one core.
struct SchemaLimits {
    std::size_t max_steps = 1'000'000;
    std::size_t max_text_bytes = 4 << 20;  // a longer answer is not even parsed
};

// A JSON Schema that answers are checked against (docs/answers.md#output-validation), compiled
// once per request. `strict` changes nothing here: the schema is enforced exactly as given,
// whichever deployment answered. Immutable; shareable across threads.
class OutputSchema final {
  public:
    // The compiled schema, or why `schema` is none we can check (JsonSchema::Compile lists the
    // reasons): the request is then served with its answers unchecked, reported as skipped.
    static std::variant<std::shared_ptr<const OutputSchema>, std::string> Compile(
        const boost::json::value& schema);

    // Checks an answer's text against the schema:
    //  - kPassed: it is JSON (at most core::kMaxJsonDepth deep) that matches;
    //  - kFailed: `the answer is not JSON`, or where and what is wrong (the first problem);
    //  - kSkipped, with the reason: the text is longer than `limits.max_text_bytes`, or the check
    //    would need more than `limits.max_steps` steps or nest schemas deeper than
    //    JsonSchema::kMaxCheckDepth. Nothing is known about such an answer.
    // CPU-bound, bounded by the limits: at the defaults up to ~0.1 s, plus parsing at 3 to 20 ms
    // per MB of text (measured; fresh memory is the slow end); run it off the event loop. Needs
    // up to ~1 MiB of stack (JsonSchema::kMaxCheckDepth). Const and thread-safe.
    SchemaVerdict Check(std::string_view text, const SchemaLimits& limits = {}) const;

  private:
    explicit OutputSchema(JsonSchema schema) : schema_(std::move(schema)) {}

    JsonSchema schema_;
};

}  // namespace switchyard::answers
