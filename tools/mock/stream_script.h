#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "fault_spec.h"

namespace switchyard::mock {

// The events of one streamed answer, in the three parts every provider's stream has: opening
// events, one event per content delta (the "chunks" the *_after_chunks fault keys count: words or
// tool-argument fragments), and closing events; plus the in-stream error event that replaces the
// rest when a fault asks for one. Each API's wire module implements it; the server's one stream
// loop sends it, so delays, cuts and padding act alike on every API.
//
// Every Append is a pure function of the script and its arguments (sequence numbers included), so
// an event may be built twice: the loop builds the first delta once to measure it before padding.
class StreamScript {
  public:
    virtual ~StreamScript() = default;

    virtual int OpeningCount() const = 0;
    virtual void AppendOpening(std::string& out, int step) const = 0;
    virtual int DeltaCount() const = 0;
    virtual void AppendDelta(std::string& out, int index) const = 0;
    virtual int ClosingCount() const = 0;
    virtual void AppendClosing(std::string& out, int step) const = 0;

    // The error event sent in place of delta `deltas_sent` (after that many deltas): the body of
    // the named `error`, else the API's default in-stream error.
    virtual void AppendError(std::string& out, int deltas_sent,
                             std::optional<NamedError> error) const = 0;
};

// The length of the `data:` line of one SSE event (without its line feed), or 0 when it has none.
inline std::size_t DataLineBytes(std::string_view event) {
    std::size_t start = 0;
    if (!event.starts_with("data:")) {
        start = event.find("\ndata:");
        if (start == std::string_view::npos) return 0;
        ++start;
    }
    const std::size_t end = event.find('\n', start);
    return (end == std::string_view::npos ? event.size() : end) - start;
}

}  // namespace switchyard::mock
