#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "answers/output_schema.h"
#include "answers/schema_pattern.h"
#include "api/openai_chat.h"

// Drill cases (docs/drills.md#writing-cases): a request and what its answer must be, read from a
// JSONL file, one case per line.
namespace switchyard::drills {

// What a case's answer must satisfy. Text checks look at the assistant's text in the case's API
// (api::AnswerText): an answer without text (a tool call, a refusal) fails every one of them.
struct Expectation {
    std::vector<std::string> contains;      // each must occur in the text
    std::vector<std::string> not_contains;  // none may occur
    // Expressions in JSON Schema's `pattern` syntax (ECMA-262, run by RE2 in linear time): each
    // must match somewhere in the text.
    std::vector<std::shared_ptr<const answers::SchemaPattern>> regex;
    std::shared_ptr<const answers::OutputSchema> json_schema;  // the text is JSON matching it
    std::optional<double> max_latency_ms;  // from the request's send to the whole answer
    std::optional<double> max_cost;        // USD, at the deployment's prices
};

// One case: its id, the request in its API (`body`, JSON text), and the expectations.
struct DrillCase {
    std::string id;
    api::Wire wire = api::Wire::kOpenAi;
    std::string body;
    // The request's max_completion_tokens, max_tokens or max_output_tokens (0: none): what its
    // call reserves of a deployment's token headroom, as production's would.
    std::int64_t max_tokens = 0;
    Expectation expect;
    // The schema the request itself asks for (response_format, output_config.format,
    // text.format): production checks every answer against it, and so does the drill. Null: none
    // (or one that cannot be compiled, which production leaves unchecked too).
    std::shared_ptr<const answers::OutputSchema> requested_schema;
};

// What a case's call produced, as the expectations see it.
struct Observed {
    std::optional<std::string> text;  // nullopt: the answer had none
    double latency_ms = 0;
    std::optional<double> cost;  // nullopt: the provider reported no usage
};

// Reads one case line: {"id": string, "request": object, "expect": object, "api": "chat" |
// "messages" | "responses"}. `api` defaults to "responses" when the request has `input` and no
// `messages`, else "chat". The request's `model` is set to `model` (the drilled group; the drill
// rewrites it per entry anyway) and `stream` to false: a drill reads every answer whole. An error
// names what is wrong.
std::variant<DrillCase, std::string> ParseCase(std::string_view line, std::string_view model);

// Every case of a JSONL file (blank lines skipped). Problems carry the line number; ids must be
// unique. `cases` is empty when there are problems.
struct CaseFile {
    std::vector<DrillCase> cases;
    std::vector<std::string> problems;
};
CaseFile ParseCases(std::string_view text, std::string_view model);

// What `observed` breaks of `expect`, one sentence each; empty: the case passed.
std::vector<std::string> Unmet(const Expectation& expect, const Observed& observed);

// The name of a case's API ("chat", "messages", "responses").
std::string_view ApiName(api::Wire wire);

}  // namespace switchyard::drills
