#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::mock {

// Provider errors a fault spec can ask for by name (`error=<name>`). Each has a default status
// (NamedErrorStatus) and a wire body built by the wire module of the requested API.
enum class NamedError {
    kRateLimit,
    kInsufficientQuota,
    kCreditBalanceExhausted,
    kOrganizationSpendLimit,
    kProjectSpendLimit,
    kContextLength,
    kContentPolicy,
    kServerOverloaded,
    kServerError,
    kInvalidApiKey,
    kModelNotFound,
    kTimeout,
    // Anthropic's errors (docs/providers.md#anthropic-errors).
    kEnforcedSpendLimit,
    kPromptTooLong,
    kOverloaded,
    kBilling,
};

// Returns the error named `name` as written in a fault spec, or nullopt if there is none.
std::optional<NamedError> NamedErrorFromName(std::string_view name);

// The spelling of `error` in a fault spec.
std::string_view NamedErrorName(NamedError error);

// The HTTP status the provider answers `error` with.
int NamedErrorStatus(NamedError error);

// What `body=` puts in place of the answer's JSON body, under status 200 and the normal headers.
enum class BodyFault {
    kError,       // the provider's error envelope for status 500
    kWrongShape,  // a JSON object that is no answer of the requested API
};

// What `batch_refuse=` makes the provider answer to a batch creation (docs/mock.md#batch-apis).
enum class BatchRefusal {
    kQueueLimit,  // the organisation's queue of batch work is full
    kModel,       // the batch's model is not available for batches
};

// One parsed fault spec: what the mock does to a single provider request instead of, or on top
// of, a normal answer. A default-constructed spec injects nothing. Durations are milliseconds.
struct FaultSpec final {
    std::optional<int> status;
    std::optional<NamedError> error;

    std::optional<double> retry_after_s;
    std::optional<double> retry_after_date_s;  // Seconds from now, sent as an IMF-fixdate.
    std::optional<double> retry_after_ms;
    std::optional<bool> x_should_retry;

    std::chrono::milliseconds delay_headers{0};
    std::chrono::milliseconds delay_first_chunk{0};
    std::chrono::milliseconds delay_chunks{0};
    std::optional<int> chunks;

    std::optional<int> error_after_chunks;
    std::optional<int> reset_after_chunks;
    std::optional<int> stall_after_chunks;
    // After N word chunks, end the chunked body cleanly with no finish chunk and no end event.
    std::optional<int> end_after_chunks;
    // Send only the first N bytes of a JSON body (Content-Length N): an answer cut short.
    std::optional<int> truncate_body;
    bool stall = false;
    bool reset = false;
    bool close = false;
    // Anthropic: answer with a tool_use block when the request has tools; Responses API: with a
    // function_call item when it has a function tool.
    bool tool_use = false;
    // A request that asks for a JSON schema gets a reply that breaks it (docs/mock.md).
    bool invalid_output = false;
    // A stream's head and every event (each its own chunk) go out in one write, as a provider
    // whose events arrive in one packet (docs/mock.md).
    bool one_write = false;
    // With error_after_chunks: the in-stream error is a bare `event: error` without a data line
    // (a provider or proxy that lost the error's body), whatever the API.
    bool error_without_data = false;

    // Interim (1xx) responses sent, each in its own write and in this order, before the response
    // head. Codes in [100, 199] except 101; at most 16.
    std::vector<int> interim;
    // After the complete answer, wait this long and then send an unsolicited second response on
    // the same connection: the stray bytes a pooled connection must not be trusted with.
    std::optional<std::chrono::milliseconds> late_response;
    std::optional<BodyFault> body;
    // The first content event's `data:` line (a non-streaming answer: its body) is padded to at
    // least this many bytes.
    std::optional<int> event_bytes;

    double probability = 1.0;

    // The batch keys act on the creation of a batch only (docs/mock.md#batch-apis) and combine
    // with no other key. `batch` is set when the spec has any of them, even `batch_expire=0`.
    bool batch = false;
    std::optional<std::chrono::milliseconds> batch_ms;  // the batch's processing time
    bool batch_expire = false;  // the batch runs out of time instead of completing
    std::optional<BatchRefusal> batch_refuse;

    // The status of the error response this spec replaces the answer with, if it asks for one.
    // `status` wins over the named error's own status. An `error` combined with
    // `error_after_chunks` names the in-stream error body only, so it yields nullopt.
    std::optional<int> ErrorStatus() const;

    // The word-chunk count after which a stream is cut short by error_after_chunks,
    // reset_after_chunks, stall_after_chunks or end_after_chunks (at most one is set), or nullopt.
    std::optional<int> CutAfterChunks() const;
};

// Result of ParseFaultSpec: `error` is empty on success, otherwise a one-line reason and `spec`
// is unspecified.
struct ParsedFaultSpec final {
    FaultSpec spec;
    std::string error;

    bool ok() const { return error.empty(); }
};

// Parses a `;`-separated list of `key=value` tokens (blanks around tokens, keys and values are
// ignored; empty tokens are skipped, so "" is the empty spec). Every key may appear once.
// Rejects unknown keys, malformed or out-of-range values and contradictory combinations, e.g.
// two ways of ending a stream early, `status=` together with a mid-stream fault, or a batch key
// together with a key of another kind.
// Pure: no I/O, no clock, no randomness.
ParsedFaultSpec ParseFaultSpec(std::string_view text);

// `text` without its leading and trailing spaces and tabs (header values, fault specs).
std::string_view TrimBlanks(std::string_view text);

}  // namespace switchyard::mock
