#include "api/stream_relay.h"

#include <boost/json.hpp>
#include <limits>

#include "api/stream_assembler.h"
#include "api/stream_events.h"
#include "api/usage.h"

namespace switchyard::api {

StreamRelay::StreamRelay(const StreamRelayOptions& options)
    : options_(options), responses_front_(options.front == Wire::kResponses && !options.assemble) {
    // The client's API may differ from the deployment's: translated event by event. In assemble
    // mode the events become OpenAI chunks, the assembler's input.
    if (options.upstream == Wire::kAnthropic &&
        (options.front != Wire::kAnthropic || options.assemble)) {
        to_openai_.emplace(options.include_usage || options.assemble || responses_front_,
                           options.created);
    } else if (options.upstream == Wire::kOpenAi && options.front == Wire::kAnthropic &&
               !options.assemble) {
        to_anthropic_.emplace();
    }
    if (responses_front_ && options.upstream != Wire::kResponses) {
        static const boost::json::object kNoRequest;
        to_responses_.emplace(options.request != nullptr ? *options.request : kNoRequest,
                              options.created);
    }
    if (options.keep_text) text_.emplace(options.upstream);
}

void StreamRelay::Emit(const core::SseEvent& event, std::string& destination) {
    if (to_openai_ && to_responses_) {
        chunks_.clear();
        to_openai_->Feed(event.name, event.data, chunks_);
        chained_.Feed(chunks_);
        core::SseEvent link;
        while (chained_.Next(link)) to_responses_->Feed(link.name, link.data, destination);
    } else if (to_openai_) {
        to_openai_->Feed(event.name, event.data, destination);
    } else if (to_anthropic_) {
        to_anthropic_->Feed(event.name, event.data, destination);
    } else if (to_responses_) {
        to_responses_->Feed(event.name, event.data, destination);
    } else {
        destination.append(event.raw);
    }
    if (!responses_front_) return;
    if (to_responses_) {
        next_sequence_ = to_responses_->NextSequence();
    } else if (const auto number = SequenceNumberOf(event.data);
               number && *number < std::numeric_limits<std::int64_t>::max()) {
        // (An upstream's largest number leaves the next one where it was: no overflow.)
        next_sequence_ = *number + 1;
    }
}

StreamRelay::Read StreamRelay::Feed(std::string_view bytes) {
    Read read;
    const bool holds_whole = options_.background || options_.assemble;
    sse_.Feed(bytes);
    core::SseEvent event;
    while (sse_.Next(event)) {
        if (IsErrorEvent(event)) {
            // Before any content the attempt failed and nothing goes downstream; after it — even
            // content of this same read, not yet sent — the stream ends here with the error.
            // One without data (`event: error` alone) is a failure all the same, read as an
            // api_error: the data is what the attempt's failure is classified by.
            error_event_ = event.data.empty() ? std::string(kErrorEventWithoutData) : event.data;
            if (!committed_ && content_seen_ && !holds_whole) {
                read.commits = true;
                committed_ = true;
                out_.append(held_);
                held_.clear();
            }
            read.stop = true;
            return read;
        }
        if (IsEndEvent(event)) done_seen_ = true;
        if (text_) text_->Feed(event.name, event.data);
        if (on_usage && HasUsageObject(event.data)) on_usage(event.data);
        if (!content_seen_ && CarriesContent(event)) {
            content_seen_ = true;
            read.content_began = true;
        }
        if (content_seen_ && IsProgress(event, options_.pings_are_progress)) read.progress = true;
        Emit(event, committed_ ? out_ : held_);
    }
    if (sse_.Pending().size() > kMaxEventBytes) {
        // An event that never ends would grow without bound: the upstream is broken.
        oversized_ = true;
        read.stop = true;
        return read;
    }
    if (!committed_ && content_seen_ && !holds_whole) {
        // The commit point: the head and everything held go out together.
        read.commits = true;
        committed_ = true;
        out_.append(held_);
        held_.clear();
    }
    return read;
}

std::optional<std::string> StreamRelay::Text() const {
    if (!text_) return std::nullopt;
    return text_->Text();
}

StreamRelay::Ending StreamRelay::EndingOf() const {
    if (!error_event_.empty()) return Ending::kErrorEvent;
    if (oversized_) return Ending::kOversized;
    if (!done_seen_) return Ending::kTruncated;
    return Ending::kComplete;
}

std::string StreamRelay::Assembled() const {
    OpenAiStreamAssembler assembler;
    core::SseParser again;
    again.Feed(held_);
    core::SseEvent event;
    while (again.Next(event)) assembler.Add(event.data);
    return assembler.Json();
}

std::string StreamRelay::Tail(const std::string* failure, bool truncated) {
    std::string tail = std::move(out_);
    out_.clear();
    tail.append(held_);
    held_.clear();
    // Bytes after the last complete event are still the provider's when passed through as they
    // are; not after an error event, nor when the stream was cut off in them.
    if (!Translating() && error_event_.empty() && !(failure != nullptr && truncated)) {
        tail.append(sse_.Pending());
    }
    if (failure != nullptr) {
        if (!tail.empty() && !tail.ends_with("\n\n")) tail.append("\n\n");
        tail += StreamErrorEvent(options_.front, *failure, next_sequence_);
    }
    return tail;
}

}  // namespace switchyard::api
