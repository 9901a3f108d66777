#pragma once

#include <string_view>

#include "api/openai_chat.h"

namespace switchyard::api {

// What a 2xx body from an upstream is, judged by its top-level shape alone.
enum class AnswerShape {
    kAnswer,     // an answer of the API it came from
    kNotJson,    // not one well-formed JSON object: cut short or garbage
    kError,      // an error envelope sent with a 2xx status
    kWrongShape  // a JSON object, but not this API's answer
};

// The shape of a 2xx body of `wire`'s API for `endpoint` (docs/providers.md): a chat
// completion has a `choices` array, an Anthropic message a `content` array, a Responses object an
// `output` array, an embeddings list a `data` array; none has a top-level `error` that is not
// null. Only kAnswer may be relayed, translated or kept: anything else would turn a failure into
// an empty success. One pass over the body, no document built.
AnswerShape ShapeOfAnswer(std::string_view body, Wire wire, Endpoint endpoint);

// What a shape that is no answer is, for an error message ("an error object", ...).
std::string_view Describe(AnswerShape shape);

}  // namespace switchyard::api
