#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "batches/batch_job.h"

namespace switchyard::batches {

// One line of a batch's input: what to send where, under which custom_id. An OpenAI input line
// is {"custom_id", "method": "POST", "url", "body"}; a message batch's line, as Switchyard keeps
// it, is {"custom_id", "params"} and goes to /v1/messages.
struct InputLine {
    std::string custom_id;
    std::string url;
    std::string body;  // the request's JSON
    std::string model;
};

// A line problem found while validating a batch (OpenAI's batch `errors`): its code and message.
struct LineProblem {
    std::string code;
    std::string message;
};

// Reads one input line of a batch created through `api` for `endpoint`; nullopt with `problem`.
std::optional<InputLine> ReadInputLine(Api api, std::string_view endpoint, std::string_view text,
                                       LineProblem& problem);

// Only the custom_id of an input line (a line already validated; "" if it has none).
std::string CustomIdOf(std::string_view text);

// The endpoints an OpenAI batch may name here.
bool BatchableEndpoint(std::string_view endpoint);

// How a line ended, as a result line for the client's API .
// An HTTP answer: `status`, the answer's request id and its body (JSON, or text if not JSON).
std::string AnswerLine(Api api, std::string_view custom_id, unsigned status,
                       std::string_view request_id, std::string_view body);
// A line that never ran to an answer: canceled or expired.
enum class Unrun { kCanceled, kExpired };
std::string UnrunLine(Api api, std::string_view custom_id, Unrun why);

// Input and output tokens an answer body reports (0 when it says nothing).
struct Tokens {
    std::int64_t input = 0;
    std::int64_t output = 0;
};
Tokens TokensOf(std::string_view body);

}  // namespace switchyard::batches
