// Translation in both directions, of requests, answers, error bodies and streams: never a crash,
// never an exception, and every translated answer or event is valid JSON. The first byte picks
// the translation; the rest is its input.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/responses.h"
#include "api/stream_events.h"
#include "api/translate.h"
#include "core/json.h"
#include "core/sse_parser.h"

using namespace switchyard;

namespace {

void ExpectJson(std::string_view text) {
    boost::system::error_code ec;
    core::ParseJson(text, ec);
    if (ec) std::abort();
}

// Every `data:` line of translated SSE output is JSON (or [DONE]).
void ExpectEvents(const std::string& out) {
    core::SseParser parser;
    parser.Feed(out);
    core::SseEvent e;
    while (parser.Next(e)) {
        if (e.has_data && e.data != "[DONE]") ExpectJson(e.data);
    }
    if (!parser.Pending().empty()) std::abort();  // output is whole events only
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    boost::system::error_code ec;
    const boost::json::value parsed = core::ParseJson(text, ec);
    const bool object = !ec && parsed.is_object();
    switch (data[0] % 9) {
        case 0:
            if (object) (void)api::AnthropicRequestToOpenAi(parsed.get_object());
            break;
        case 1:
            if (object) (void)api::OpenAiRequestToAnthropic(parsed.get_object(), 4096);
            break;
        case 2:
            if (object) {
                ExpectJson(boost::json::serialize(
                    api::AnthropicResponseToOpenAi(parsed.get_object(), 1700000000)));
            }
            break;
        case 3:
            if (object) {
                const auto answer = api::OpenAiResponseToAnthropic(parsed.get_object());
                if (const auto* message = std::get_if<boost::json::object>(&answer)) {
                    ExpectJson(boost::json::serialize(*message));
                }
            }
            break;
        case 4:
            ExpectJson(api::OpenAiErrorToAnthropic(text, 400 + data[0] % 200));
            ExpectJson(api::AnthropicErrorToOpenAi(text, 400 + data[0] % 200));
            (void)api::ErrorMessageOf(text);
            break;
        case 5: {
            api::AnthropicToOpenAiStream stream(true, 1700000000);
            core::SseParser parser;
            parser.Feed(text);
            core::SseEvent e;
            std::string out;
            while (parser.Next(e)) {
                (void)api::CarriesContent(e);
                stream.Feed(e.name, e.data, out);
            }
            ExpectEvents(out);
            break;
        }
        case 7:
            if (object) {
                const auto chat = api::ResponsesRequestToChat(parsed.get_object());
                if (const auto* request = std::get_if<boost::json::object>(&chat)) {
                    ExpectJson(boost::json::serialize(*request));
                }
                ExpectJson(boost::json::serialize(
                    api::ChatAnswerToResponse(parsed.get_object(), parsed.get_object(), 1)));
            }
            break;
        case 8: {
            api::ChatToResponsesStream stream(boost::json::object{}, 1700000000);
            core::SseParser parser;
            parser.Feed(text);
            core::SseEvent e;
            std::string out;
            while (parser.Next(e)) stream.Feed(e.name, e.data, out);
            ExpectEvents(out);
            break;
        }
        case 6: {
            api::OpenAiToAnthropicStream stream;
            core::SseParser parser;
            parser.Feed(text);
            core::SseEvent e;
            std::string out;
            while (parser.Next(e)) {
                (void)api::IsErrorEvent(e);
                stream.Feed(e.name, e.data, out);
            }
            ExpectEvents(out);
            break;
        }
    }
    return 0;
}
