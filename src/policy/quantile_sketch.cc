#include "policy/quantile_sketch.h"

#include <algorithm>
#include <cmath>

namespace switchyard::policy {
namespace {

// Bucket i holds (gamma^(i-1), gamma^i]; its midpoint 2 gamma^i / (gamma + 1) is within the
// relative error of every value in it.
constexpr double kGamma =
    (1 + QuantileSketch::kRelativeError) / (1 - QuantileSketch::kRelativeError);
const double kLogGamma = std::log(kGamma);

}  // namespace

int QuantileSketch::BucketOf(double value) {
    const double clamped = std::clamp(value, 1.0, kMax);
    return std::clamp(static_cast<int>(std::ceil(std::log(clamped) / kLogGamma)), 0, kBuckets - 1);
}

double QuantileSketch::ValueOf(int bucket) { return 2 * std::pow(kGamma, bucket) / (kGamma + 1); }

void QuantileSketch::Add(double value) {
    const int bucket = BucketOf(value);
    ++counts_[bucket];
    ++count_;
    highest_ = std::max(highest_, bucket);
}

void QuantileSketch::Merge(const QuantileSketch& other) {
    for (int i = 0; i <= other.highest_; ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    highest_ = std::max(highest_, other.highest_);
}

void QuantileSketch::Clear() {
    counts_.fill(0);
    count_ = 0;
    highest_ = -1;
}

double QuantileSketch::Quantile(double q) const {
    static const QuantileSketch empty;
    return Quantile(*this, empty, q);
}

double QuantileSketch::Quantile(const QuantileSketch& a, const QuantileSketch& b, double q) {
    const std::uint64_t count = a.count_ + b.count_;
    if (count == 0) return 0;
    // The value of rank ceil(q * count) (1-based), found by counting from the top: how many
    // values lie above it.
    const auto rank = static_cast<std::uint64_t>(
        std::clamp(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count)), 1.0,
                   static_cast<double>(count)));
    const std::uint64_t above = count - rank;
    std::uint64_t seen = 0;
    for (int i = std::max(a.highest_, b.highest_); i >= 0; --i) {
        seen += std::uint64_t{a.counts_[i]} + b.counts_[i];
        if (seen > above) return ValueOf(i);
    }
    return ValueOf(0);
}

}  // namespace switchyard::policy
