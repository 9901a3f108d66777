// The SSE framer gives the same events whatever way the bytes are split across reads: the first
// input byte chooses the split points, the rest is the stream.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::size_t step = 1 + data[0] % 17;
    const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
    const std::vector<Event> whole = Frame(bytes, bytes.size() + 1);
    if (Frame(bytes, step) != whole) std::abort();
    if (Frame(bytes, 1) != whole) std::abort();
    std::size_t raw = 0;
    for (const Event& e : whole) raw += e.raw.size();
    if (raw > bytes.size()) std::abort();
    return 0;
}
