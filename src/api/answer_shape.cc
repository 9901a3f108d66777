#include "api/answer_shape.h"

#include <array>

#include "core/json.h"

namespace switchyard::api {

AnswerShape ShapeOfAnswer(std::string_view body, Wire wire, Endpoint endpoint) {
    const std::string_view content = endpoint == Endpoint::kEmbeddings ? "data"
                                     : wire == Wire::kAnthropic        ? "content"
                                     : wire == Wire::kResponses        ? "output"
                                                                       : "choices";
    const std::array<std::string_view, 2> names{content, "error"};
    const core::ObjectShape shape = core::ReadObjectShape(body, names);
    if (!shape.object) return AnswerShape::kNotJson;
    const core::JsonKind error = shape.members[1];
    // Responses objects carry `"error": null`; an error envelope has an object there.
    if (error != core::JsonKind::kAbsent && error != core::JsonKind::kNull) {
        return AnswerShape::kError;
    }
    // Anthropic's error envelope is {"type":"error","error":{...}}: caught above.
    if (shape.members[0] != core::JsonKind::kArray) return AnswerShape::kWrongShape;
    return AnswerShape::kAnswer;
}

std::string_view Describe(AnswerShape shape) {
    switch (shape) {
        case AnswerShape::kAnswer:
            return "an answer";
        case AnswerShape::kNotJson:
            return "a JSON body that is incomplete or malformed";
        case AnswerShape::kError:
            return "an error object instead of an answer";
        case AnswerShape::kWrongShape:
            return "a JSON object that is not an answer of its API";
    }
    return "an unknown body";
}

}  // namespace switchyard::api
