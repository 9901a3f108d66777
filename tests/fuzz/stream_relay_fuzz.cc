// The commit point's rules (api::StreamRelay) on any upstream stream, split across reads at any
// points: the first input byte chooses (bits 0-1, 2-3 and 4-7) the upstream and client APIs and the
// mode, the second the read size, the rest is the stream. Whatever comes: nothing goes downstream
// before the commit point, and the commit point is reached only by content; a held-whole stream
// never commits on its own; downstream bytes are whole events; and a stream passed through as it is
// reaches the client byte for byte — the held events, every read's, and what followed the last
// event.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/stream_relay.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2) return 0;
    constexpr api::Wire kWires[] = {api::Wire::kOpenAi, api::Wire::kAnthropic,
                                    api::Wire::kResponses};
    api::StreamRelayOptions options;
    options.upstream = kWires[(data[0] & 3) % 3];
    options.front = kWires[((data[0] >> 2) & 3) % 3];
    options.background = (data[0] & 0x10) != 0;
    options.assemble = (data[0] & 0x20) != 0 && options.front != api::Wire::kResponses;
    options.include_usage = (data[0] & 0x40) != 0;
    options.pings_are_progress = (data[0] & 0x80) != 0;
    options.keep_text = true;
    const std::size_t step = 1 + data[1] % 64;
    const std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);
    const bool held_whole = options.background || options.assemble;

    api::StreamRelay relay(options);
    std::size_t usage_events = 0;
    relay.on_usage = [&](std::string_view) { ++usage_events; };
    std::string sent;
    bool content = false;
    for (std::size_t at = 0; at < stream.size(); at += step) {
        const api::StreamRelay::Read read = relay.Feed(stream.substr(at, step));
        content = content || read.content_began;
        if (read.commits && (held_whole || !content)) std::abort();
        if (!relay.Committed() && !relay.Out().empty()) std::abort();
        if (!relay.Out().empty() && relay.Out().back() != '\n' && relay.Out().back() != '\r') {
            std::abort();  // a piece of an event
        }
        sent += relay.Out();
        relay.Out().clear();
        if (read.stop) break;
    }
    (void)relay.Text();
    const api::StreamRelay::Ending ending = relay.EndingOf();
    if (!relay.Committed()) {
        if (ending != api::StreamRelay::Ending::kComplete) return 0;  // a failed attempt
        relay.CommitWhole();
        if (options.assemble) {
            (void)relay.Assembled();
            return 0;
        }
    }
    const std::string failure = "failed";
    const bool failed = ending != api::StreamRelay::Ending::kComplete;
    sent += relay.Tail(failed ? &failure : nullptr, ending == api::StreamRelay::Ending::kTruncated);
    if (!relay.Translating() && !failed && sent != stream) std::abort();
    return 0;
}
