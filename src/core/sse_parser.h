#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchyard::core {

// One complete Server-Sent Events event as framed by SseParser.
// `raw` holds the event's exact bytes including its terminating blank line; it stays valid until
// the next call to SseParser::Feed.
struct SseEvent {
    std::string_view raw;
    std::string_view name;  // the `event:` field, empty when absent
    std::string data;       // `data:` lines joined with '\n' (WHATWG SSE), empty when absent
    bool has_data = false;  // false for comment-only blocks such as ": keep-alive"
};

// Incremental SSE framer (WHATWG HTML "event stream interpretation"). Bytes may be split at any
// position, including between '\r' and '\n' and inside a UTF-8 sequence: framing only looks at
// ASCII line terminators. Each byte is looked at once however the event is split (an event framed
// over many reads resumes where the last read stopped). Not thread-safe; one instance per stream.
class SseParser final {
  public:
    // Appends bytes. Views handed out by earlier Next() calls become invalid.
    void Feed(std::string_view bytes);

    // Frames the next complete event; false when only an incomplete event remains buffered (the
    // event is then left as it was). Reusing one SseEvent makes a stream's events allocation-free
    // once its data has grown to the largest event's size.
    bool Next(SseEvent& event);

    // Bytes received but not yet framed into an event. A caller bounds what one event may take
    // by this size (an upstream that never ends its event must not grow it without end).
    std::string_view Pending() const { return std::string_view(buffer_).substr(consumed_); }

  private:
    // Clears the event being framed, which begins at `pos`.
    void Restart(std::size_t pos);

    std::string buffer_;
    std::size_t consumed_ = 0;  // where the event being framed begins
    // Where the event being framed stopped: the next line begins at `line_`, and holds no line
    // end before `scanned_`. Positions in `buffer_`.
    std::size_t line_ = 0;
    std::size_t scanned_ = 0;
    std::size_t name_begin_ = 0;  // its `event:` field, in `buffer_`
    std::size_t name_size_ = 0;
    bool has_data_ = false;
    std::string data_;  // the event being framed; swapped with the caller's, keeping both buffers
};

}  // namespace switchyard::core
