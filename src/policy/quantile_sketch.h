#pragma once

#include <array>
#include <cstdint>

namespace switchyard::policy {

// A streaming quantile sketch of positive values (durations in milliseconds, token counts):
// logarithmically spaced buckets, so any quantile it returns is within kRelativeError of a value
// that was added at that rank (docs/resilience.md#latency-model). Fixed memory (1.6 KB), O(1) to
// add, mergeable by adding counts. Values under 1 count as 1; above kMax, as kMax.
class QuantileSketch final {
  public:
    static constexpr double kRelativeError = 0.02;
    static constexpr double kMax = 1e7;  // ~2.8 hours in milliseconds

    void Add(double value);
    // Adds `other`'s values.
    void Merge(const QuantileSketch& other);
    void Clear();

    std::uint64_t Count() const { return count_; }
    // The value at quantile `q` in [0, 1]; 0 when empty. High quantiles are cheap: the walk starts
    // at the largest bucket in use.
    double Quantile(double q) const;
    // Quantile `q` of the values of `a` and `b` together, without merging them.
    static double Quantile(const QuantileSketch& a, const QuantileSketch& b, double q);

  private:
    static constexpr int kBuckets = 408;  // ceil(log(kMax) / log(gamma)) + 1

    static int BucketOf(double value);
    static double ValueOf(int bucket);

    std::array<std::uint32_t, kBuckets> counts_{};
    std::uint64_t count_ = 0;
    int highest_ = -1;  // the largest bucket with a count; -1 when empty
};

}  // namespace switchyard::policy
