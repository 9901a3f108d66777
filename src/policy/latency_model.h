#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "policy/quantile_sketch.h"

namespace switchyard::policy {

using std::chrono::milliseconds;

// What one successful attempt took (docs/resilience.md#latency-model). A stream gives its head,
// first token and longest gap; a whole answer its time to the answer and its size.
struct LatencySample {
    bool stream = false;
    std::optional<milliseconds> first_byte;   // request sent -> response headers
    std::optional<milliseconds> first_token;  // stream: response headers -> first content event
    std::optional<milliseconds> longest_gap;  // stream: the longest wait between content events
    std::int64_t output_tokens = -1;          // whole answer: its size; -1 unknown
};

// The high percentile of each measure, over the recent windows; nullopt where the history is too
// short to say.
struct LatencyQuantiles {
    std::optional<milliseconds> stream_first_byte;
    std::optional<milliseconds> first_token;
    std::optional<milliseconds> gap;
    std::optional<milliseconds> whole;   // a whole answer's time to its (first) byte
    std::optional<double> whole_tokens;  // ... and its size, the same percentile
    std::uint64_t stream_samples = 0;
    std::uint64_t whole_samples = 0;
};

// One deployment's latency history: a sketch per measure for the current window and the one
// before, so old history ages out and a deployment's new normal replaces it within two windows.
// Not thread-safe (DeploymentHealth locks it).
class LatencyModel final {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    struct Options {
        std::chrono::milliseconds window{300'000};
        int min_samples = 20;  // fewer: no percentile is given
        double quantile = 0.99;
    };

    LatencyModel() = default;
    explicit LatencyModel(Options options) : options_(options) {}

    void Record(TimePoint now, const LatencySample& sample);
    LatencyQuantiles Quantiles(TimePoint now) const;
    // The quantile `q` of each measure, whatever the options say (for /status).
    LatencyQuantiles QuantilesAt(TimePoint now, double q, int min_samples) const;

  private:
    struct Sketches {
        QuantileSketch stream_first_byte, first_token, gap, whole, whole_tokens;
        void Clear();
    };
    void Roll(TimePoint now);
    // Whether the windows as of `now` still hold the current and previous sketches.
    bool CurrentAt(TimePoint now) const { return now - current_start_ < options_.window; }
    bool PreviousAt(TimePoint now) const { return now - current_start_ < 2 * options_.window; }

    Options options_;
    TimePoint current_start_{};
    Sketches current_, previous_;
};

}  // namespace switchyard::policy
