#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

namespace switchyard::policy {

// Why an attempt failed, in words shared by logs, metrics and error bodies.
enum class ErrorClass {
    kNone,
    kRateLimited,      // 429: a rate limit; retry-after says when
    kQuotaExhausted,   // spend cap / no credit: this deployment cannot serve until a human acts
    kOverloaded,       // 529, 503: the provider is busy
    kServerError,      // 500, 502 and other 5xx
    kTimeout,          // 504, or no (complete) answer in time
    kConnection,       // refused, reset, unreachable before a response
    kTls,              // handshake or certificate failure
    kContextWindow,    // the prompt does not fit the model
    kContentPolicy,    // refused by the provider's content filter
    kRetryableClient,  // 408, 409 (lock timeouts): the SDKs retry these
    kBadRequest,       // 400, 413, 422: the request itself is wrong
    kAuth,             // 401, 403
    kNotFound,         // 404
    kProtocol,         // not an HTTP answer we understand, or one cut short
    kInvalidOutput,    // a 200 whose output does not match the requested JSON schema
    // The gateway itself ran out of something (file descriptors, socket buffers, memory) before
    // the request reached the upstream: says nothing about the deployment.
    kLocal,
};

inline constexpr std::size_t kErrorClassCount = static_cast<std::size_t>(ErrorClass::kLocal) + 1;

// A value per error class, looked up by the class itself.
template <class T>
struct ClassTable {
    std::array<T, kErrorClassCount> values{};

    T& operator[](ErrorClass c) { return values[static_cast<std::size_t>(c)]; }
    const T& operator[](ErrorClass c) const { return values[static_cast<std::size_t>(c)]; }
};

// What the attempt loop should do next with this request.
enum class Action {
    kSuccess,
    kRetry,            // may succeed unchanged: another deployment now, or this one after a wait
    kFailOver,         // this deployment cannot serve it: another one, never this one again
    kGiveUp,           // the answer is the client's: return it
    kContextFallback,  // try the context_window_fallbacks
    kContentFallback,  // try the content_policy_fallbacks
};

struct Outcome {
    Action action = Action::kSuccess;
    ErrorClass error_class = ErrorClass::kNone;
    // The provider's minimum wait (retry-after-ms / retry-after), when it sent one.
    std::optional<std::chrono::milliseconds> retry_after;
};

std::string_view Name(ErrorClass error_class);
// The class with that name (Name's inverse); nullopt for an unknown name.
std::optional<ErrorClass> ErrorClassNamed(std::string_view name);
std::string_view Name(Action action);

}  // namespace switchyard::policy
