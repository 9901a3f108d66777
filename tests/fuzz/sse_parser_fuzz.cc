// The SSE framer gives the same events whatever way the bytes are split across reads: the first
// input byte chooses the split points, the rest is the stream. Each event's usage, as the relay
// reads it without building a document, agrees with a parsed document wherever the usage object
// is valid JSON. Whether an event carries content, as the relay reads it in one pass of the parser,
// agrees with the same rule applied to a parsed document.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "api/stream_events.h"
#include "api/usage.h"
#include "core/json.h"
#include "core/sse_parser.h"

using namespace switchyard;

namespace {

struct Event {
    std::string raw, name, data;
    bool has_data;
    bool operator==(const Event&) const = default;
};

std::vector<Event> Frame(std::string_view bytes, std::size_t step) {
    core::SseParser parser;
    core::SseEvent e;
    std::vector<Event> events;
    for (std::size_t i = 0; i < bytes.size(); i += step) {
        parser.Feed(bytes.substr(i, step));
        while (parser.Next(e)) {
            events.push_back({std::string(e.raw), std::string(e.name), e.data, e.has_data});
        }
    }
    return events;
}

// What FindUsage must report for `text`'s last usage object, from a parsed document; nothing to
// compare with when the object is no valid JSON (FindUsage may then read it either way).
void CheckUsage(std::string_view text) {
    const std::optional<api::Usage> scanned = api::FindUsage(text);
    const std::size_t key = text.rfind("\"usage\"");
    if (key == std::string_view::npos) {
        if (scanned) std::abort();
        return;
    }
    std::size_t pos = key + 7;
    while (pos < text.size() &&
           std::string_view(" \n\r\t:").find(text[pos]) != std::string_view::npos)
        ++pos;
    if (pos >= text.size() || text[pos] != '{') {
        if (scanned) std::abort();
        return;
    }
    boost::system::error_code ec;
    boost::json::stream_parser parser;
    const std::size_t used = parser.write_some(text.data() + pos, text.size() - pos, ec);
    if (ec || !parser.done()) return;
    // Member names with escapes are read as written (providers never escape them).
    if (text.substr(pos, used).find('\\') != std::string_view::npos) return;
    const boost::json::value value = parser.release();
    if (!value.is_object()) return;
    // The rule the relay has always applied to a parsed usage object.
    const boost::json::object& o = value.get_object();
    api::Usage expected;
    for (const char* name : {"prompt_tokens", "input_tokens"}) {
        if (const auto* v = o.if_contains(name); v && v->is_int64())
            expected.input_tokens = v->get_int64();
    }
    for (const char* name : {"completion_tokens", "output_tokens"}) {
        if (const auto* v = o.if_contains(name); v && v->is_int64())
            expected.output_tokens = v->get_int64();
    }
    if (!scanned || scanned->input_tokens != expected.input_tokens ||
        scanned->output_tokens != expected.output_tokens) {
        std::abort();
    }
}

// The commit-point rule on a parsed document: what api::CarriesContent must answer.
bool CarriesContentByDocument(const core::SseEvent& event) {
    if (!event.has_data) return false;
    if (event.data == "[DONE]") return true;
    if (event.name == "ping" || event.name == "message_start") return false;
    boost::system::error_code ec;
    const boost::json::value value = core::ParseJson(event.data, ec);
    if (ec || !value.is_object()) return true;
    const boost::json::object& o = value.get_object();
    if (const auto* type = o.if_contains("type"); type && type->is_string()) {
        const std::string_view t = type->get_string();
        if (t.starts_with("response.")) {
            return t.ends_with(".delta") || t == "response.completed" || t == "response.incomplete";
        }
        return t == "content_block_delta" || t == "message_delta" || t == "message_stop";
    }
    const auto* choices = o.if_contains("choices");
    if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
        return o.contains("usage");
    }
    const auto& choice = choices->get_array().front();
    if (!choice.is_object()) return true;
    if (const auto* finish = choice.get_object().if_contains("finish_reason");
        finish && !finish->is_null()) {
        return true;
    }
    const auto* delta = choice.get_object().if_contains("delta");
    if (delta == nullptr || !delta->is_object()) return false;
    const auto& d = delta->get_object();
    if (const auto* content = d.if_contains("content");
        content && content->is_string() && !content->get_string().empty()) {
        return true;
    }
    const auto* refusal = d.if_contains("refusal");
    return d.contains("tool_calls") || d.contains("function_call") ||
           (refusal != nullptr && !refusal->is_null());
}

void CheckContent(const Event& e) {
    core::SseEvent event;
    event.name = e.name;
    event.data = e.data;
    event.has_data = e.has_data;
    if (api::CarriesContent(event) != CarriesContentByDocument(event)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::size_t step = 1 + data[0] % 17;
    const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::vector<Event> whole = Frame(bytes, bytes.size() + 1);
    if (Frame(bytes, step) != whole) std::abort();
    if (Frame(bytes, 1) != whole) std::abort();
    std::size_t raw = 0;
    for (const Event& e : whole) {
        raw += e.raw.size();
        CheckUsage(e.data);
        CheckContent(e);
    }
    if (raw > bytes.size()) std::abort();
    return 0;
}
