#include "api/whole_answer.h"

#include <boost/json.hpp>

#include "api/responses.h"
#include "api/translate.h"
#include "core/json.h"

namespace switchyard::api {

std::variant<std::string, core::LocalError> TranslateWholeAnswer(
    std::string_view body, unsigned status, Wire from, Wire to, std::int64_t created,
    const boost::json::object* request) {
    if (from == to) return std::string(body);
    if (status < 200 || status >= 300) {
        // The Responses API uses the chat envelope for HTTP errors.
        if (from == Wire::kAnthropic) return AnthropicErrorToOpenAi(body, status);
        if (to == Wire::kAnthropic) return OpenAiErrorToAnthropic(body, status);
        return std::string(body);
    }
    boost::system::error_code ec;
    boost::json::value parsed = core::ParseJson(body, ec);
    if (ec || !parsed.is_object()) {
        return core::LocalError{core::ErrorKind::kUpstreamProtocol,
                                "The upstream answer is not a JSON object."};
    }
    if (to == Wire::kResponses) {
        // Chat completions (or Anthropic, by way of them) as a Responses response.
        const boost::json::object completion =
            from == Wire::kAnthropic ? AnthropicResponseToOpenAi(parsed.get_object(), created)
                                     : parsed.get_object();
        static const boost::json::object kNoRequest;
        return boost::json::serialize(
            ChatAnswerToResponse(completion, request != nullptr ? *request : kNoRequest, created));
    }
    if (from == Wire::kAnthropic) {
        return boost::json::serialize(AnthropicResponseToOpenAi(parsed.get_object(), created));
    }
    auto answer = OpenAiResponseToAnthropic(parsed.get_object());
    if (auto* error = std::get_if<core::LocalError>(&answer)) return std::move(*error);
    return boost::json::serialize(std::get<boost::json::object>(answer));
}

}  // namespace switchyard::api
