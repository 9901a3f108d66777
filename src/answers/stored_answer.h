#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace switchyard::answers {

// An answer as it went downstream, kept to be sent again (docs/answers.md): an idempotent replay
// or a cached answer. A stream is kept as the SSE bytes the client received, and is sent again as
// one body with the same content type.
struct StoredAnswer {
    unsigned status = 0;
    // Header lines as sent ("Name: value\r\n"), without Server, Content-Length, Connection and
    // Transfer-Encoding, which every write sets anew.
    std::string headers;
    std::string body;
    bool stream = false;

    std::size_t Bytes() const { return headers.size() + body.size(); }
};

// One string for the shared state store, and back. What comes back from the store is input like
// any other: nullopt unless it is an encoded answer with a final status (200-599) and well-formed
// header lines that hold no framing header.
std::string Encode(const StoredAnswer& answer);
std::optional<StoredAnswer> Decode(std::string_view text);

// Whether the header `name` is one a write sets anew (never stored).
bool IsFramingHeader(std::string_view name);

// What is being sent downstream for one request, captured as it goes (RequestContext::capture).
// Bounded: past `limit` bytes the capture is abandoned (`overflow`) and the answer is not kept.
struct AnswerCapture {
    explicit AnswerCapture(std::size_t limit_) : limit(limit_) {}

    StoredAnswer answer;
    std::size_t limit;
    bool started = false;   // a head was captured
    bool complete = false;  // the whole answer went (or would have gone) downstream
    bool overflow = false;
    // The answer is a stand-in for a failure (a degradation, a stale cached answer, a stream
    // broken after its commit point): never kept as the request's own answer.
    bool transient = false;
    bool replayed = false;  // a kept answer sent again (never cached again: its age would reset)

    // A whole answer written at once.
    void Whole(unsigned status, std::string_view headers, std::string_view body);
    // A stream: its head, then its bytes as they go, then its end.
    void StreamHead(unsigned status, std::string headers);
    void StreamBytes(std::string_view bytes);
    void StreamEnd() { complete = started && !overflow; }

    // The answer, when there is a whole one worth keeping.
    bool Keepable() const { return complete && !overflow && !transient; }
};

}  // namespace switchyard::answers
