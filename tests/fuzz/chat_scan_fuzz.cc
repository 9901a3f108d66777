// Differential: whatever the fast chat scanner accepts, the full JSON parser (with the same depth
// limit) accepts too and reads the same model, stream flag and max_tokens. The gateway forwards
// scanned bytes unparsed, so a disagreement would send a request the gateway misread.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/chat_scan.h"
#include "core/json.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view body(reinterpret_cast<const char*>(data), size);
    const auto scan = api::ScanChatRequest(body);
    if (!scan) return 0;
    boost::system::error_code ec;
    const boost::json::value parsed = core::ParseJson(body, ec);
    if (ec || !parsed.is_object()) std::abort();  // the scanner accepted what the parser refuses
    const boost::json::object& o = parsed.get_object();
    const boost::json::value* model = o.if_contains("model");
    if (model == nullptr || !model->is_string() || model->get_string() != scan->model) std::abort();
    const boost::json::value* stream = o.if_contains("stream");
    const bool streamed = stream != nullptr && stream->is_bool() && stream->get_bool();
    if (streamed != scan->stream) std::abort();
    std::int64_t max_tokens = 0;
    for (const char* key : {"max_tokens", "max_completion_tokens"}) {
        const boost::json::value* v = o.if_contains(key);
        if (v != nullptr && v->is_int64() && v->get_int64() > max_tokens) {
            max_tokens = v->get_int64();
        }
        if (v != nullptr && v->is_uint64() && v->get_uint64() <= INT64_MAX &&
            static_cast<std::int64_t>(v->get_uint64()) > max_tokens) {
            max_tokens = static_cast<std::int64_t>(v->get_uint64());
        }
    }
    if (max_tokens != scan->max_tokens) std::abort();
    return 0;
}
