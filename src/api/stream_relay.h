#pragma once

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "api/local_reply.h"
#include "api/openai_chat.h"
#include "api/responses.h"
#include "api/structured_output.h"
#include "api/translate.h"
#include "core/sse_parser.h"

namespace switchyard::api {

// How a stream is relayed.
struct StreamRelayOptions {
    Wire upstream = Wire::kOpenAi;  // what the deployment speaks
    Wire front = Wire::kOpenAi;     // what the client speaks
    // Hold the whole stream until it has ended well, so that any failure can be retried whole.
    bool background = false;
    // Collect the stream into one chat.completion (the client did not ask for a stream). Implies
    // holding it whole.
    bool assemble = false;
    bool include_usage = false;  // the client asked for OpenAI's usage chunk
    bool pings_are_progress = false;
    bool keep_text = false;  // keep the answer's text for an output check
    // The client's request, which a Responses stream echoes (null: an empty one).
    const boost::json::object* request = nullptr;
    std::int64_t created = 0;  // the Unix time translated chunks carry
};

// The rules of a relayed SSE stream, without its I/O (docs/providers.md#streams): what upstream
// bytes become downstream, event by event and translated to the client's API; where the commit
// point is; and what a failure becomes on either side of it.
//
// Events before the first that carries content (the role chunk, pings) are held back, so an error
// event, a reset or a stall before any content fails the attempt like any other and the engine may
// retry or fall back. The first content event is the commit point: the held events go out with it,
// and from then on each read's complete events. After the commit point a failure can no longer
// fail over; it ends the stream with Switchyard's `stream_interrupted` error event (the upstream's
// message inside). In background and assemble mode nothing commits before the stream ended well.
class StreamRelay final {
  public:
    // The largest event an upstream may send (the `data:` of a Responses `response.completed`
    // carries the whole answer; 8 MiB is far beyond any model's output).
    static constexpr std::size_t kMaxEventBytes = 8 << 20;

    explicit StreamRelay(const StreamRelayOptions& options);

    // What one upstream read did.
    struct Read {
        bool content_began = false;  // the first content event came in this read
        bool progress = false;       // content progressed: the between-chunks timer restarts
        bool commits = false;        // the commit point: the head goes out now, with Out()
        bool stop = false;           // read no more: an error event, or an event beyond the limit
    };
    Read Feed(std::string_view bytes);

    // Bytes to send downstream now: after the commit point, the complete events read so far.
    std::string& Out() { return out_; }

    // Called with the JSON of each event that carries a usage object.
    std::function<void(std::string_view)> on_usage;

    bool Committed() const { return committed_; }
    // Whether events are translated (else passed through byte for byte).
    bool Translating() const { return to_openai_ || to_anthropic_ || to_responses_; }
    // The data of the upstream's error event, if one came; kErrorEventWithoutData for one that
    // had none.
    const std::string& ErrorEvent() const { return error_event_; }
    static constexpr std::string_view kErrorEventWithoutData =
        "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":"
        "\"The upstream sent an error event without data.\"}}";
    // The sequence number the next Responses event takes (the client's stream's, when the client
    // speaks the Responses API).
    std::int64_t NextSequence() const { return next_sequence_; }
    // The text of the answer so far (keep_text), as StreamText gives it.
    std::optional<std::string> Text() const;

    // How the stream ended, once nothing more comes (a transport failure aside, which is the
    // caller's to see).
    enum class Ending {
        kComplete,    // its end event came
        kErrorEvent,  // the upstream sent an error event
        kOversized,   // an event beyond kMaxEventBytes
        kTruncated,   // a clean end without the end event: no complete answer
    };
    Ending EndingOf() const;

    // The stream ended well before committing (held whole, or with no content at all): it commits
    // now, everything at once.
    void CommitWhole() { committed_ = true; }
    // Assemble mode: the held events as one chat.completion (OpenAI's JSON).
    std::string Assembled() const;
    // Everything still to send, after the stream ended: what Out() still holds, the held events
    // when it committed whole, bytes after the last complete event when passed through as they
    // are, and — when `failure` says what failed after the commit point — the error event that
    // ends the stream. `truncated`: the failure is a stream cut off without its end event.
    std::string Tail(const std::string* failure, bool truncated);

  private:
    void Emit(const core::SseEvent& event, std::string& destination);

    StreamRelayOptions options_;
    bool responses_front_;
    std::optional<AnthropicToOpenAiStream> to_openai_;
    std::optional<OpenAiToAnthropicStream> to_anthropic_;
    std::optional<ChatToResponsesStream> to_responses_;
    core::SseParser chained_;  // chat chunks on their way from Anthropic to the Responses API
    std::string chunks_;
    std::optional<StreamText> text_;

    core::SseParser sse_;
    std::string held_;  // events not yet sent: before the commit point, or all when held whole
    std::string out_;
    std::string error_event_;
    std::int64_t next_sequence_ = 0;
    bool committed_ = false;
    bool content_seen_ = false;
    bool done_seen_ = false;
    bool oversized_ = false;
};

}  // namespace switchyard::api
