#include "policy/latency_model.h"

#include <cmath>

namespace switchyard::policy {

void LatencyModel::Sketches::Clear() {
    stream_first_byte.Clear();
    first_token.Clear();
    gap.Clear();
    whole.Clear();
    whole_tokens.Clear();
}

void LatencyModel::Roll(TimePoint now) {
    if (CurrentAt(now)) return;
    if (PreviousAt(now)) {
        previous_ = current_;
    } else {
        previous_.Clear();
    }
    current_.Clear();
    current_start_ = now;
}

void LatencyModel::Record(TimePoint now, const LatencySample& sample) {
    Roll(now);
    const auto ms = [](milliseconds d) { return static_cast<double>(d.count()); };
    if (sample.stream) {
        if (sample.first_byte) current_.stream_first_byte.Add(ms(*sample.first_byte));
        if (sample.first_token) current_.first_token.Add(ms(*sample.first_token));
        if (sample.longest_gap) current_.gap.Add(ms(*sample.longest_gap));
        return;
    }
    if (!sample.first_byte) return;
    current_.whole.Add(ms(*sample.first_byte));
    current_.whole_tokens.Add(static_cast<double>(std::max<std::int64_t>(sample.output_tokens, 1)));
}

LatencyQuantiles LatencyModel::Quantiles(TimePoint now) const {
    return QuantilesAt(now, options_.quantile, options_.min_samples);
}

LatencyQuantiles LatencyModel::QuantilesAt(TimePoint now, double q, int min_samples) const {
    LatencyQuantiles out;
    // As Roll would see them at `now`, without changing anything.
    static const QuantileSketch empty;
    const bool current = CurrentAt(now);
    const bool previous = PreviousAt(now);
    const auto measure = [&](QuantileSketch Sketches::*which,
                             std::uint64_t* count) -> std::optional<double> {
        const QuantileSketch& a = current ? current_.*which : empty;
        const QuantileSketch& b =
            current ? (previous ? previous_.*which : empty) : (previous ? current_.*which : empty);
        const std::uint64_t n = a.Count() + b.Count();
        if (count != nullptr) *count = n;
        if (n == 0 || n < static_cast<std::uint64_t>(min_samples)) return std::nullopt;
        return QuantileSketch::Quantile(a, b, q);
    };
    const auto duration = [](std::optional<double> v) -> std::optional<milliseconds> {
        if (!v) return std::nullopt;
        return milliseconds(static_cast<std::int64_t>(std::ceil(*v)));
    };
    out.stream_first_byte = duration(measure(&Sketches::stream_first_byte, &out.stream_samples));
    out.first_token = duration(measure(&Sketches::first_token, nullptr));
    out.gap = duration(measure(&Sketches::gap, nullptr));
    out.whole = duration(measure(&Sketches::whole, &out.whole_samples));
    out.whole_tokens = measure(&Sketches::whole_tokens, nullptr);
    return out;
}

}  // namespace switchyard::policy
