#pragma once

#include <atomic>
#include <cstdint>

namespace switchyard::policy {

// Retry throttling as in gRPC A6 (and the AWS SDKs' retry quota): a token bucket that starts full
// at `max_tokens`; every failed attempt takes one token, every success gives back `token_ratio`.
// Retries are allowed only while more than half the tokens remain. While a dependency is healthy
// retries flow freely; during an outage the bucket drains and each request makes one attempt, so
// retries can never multiply the traffic an outage sees. Thread-safe and lock-free.
class RetryBudget final {
  public:
    RetryBudget(double max_tokens, double token_ratio);

    void OnFailure();
    void OnSuccess();
    bool CanRetry() const;
    double Tokens() const;
    // Takes over another budget's level (a config reload keeps a deployment's budget).
    void Set(double tokens);

  private:
    static constexpr std::int64_t kScale = 1000;  // tokens are kept in thousandths
    void Add(std::int64_t delta);

    const std::int64_t max_;
    const std::int64_t ratio_;
    std::atomic<std::int64_t> tokens_;
};

}  // namespace switchyard::policy
