#pragma once

#include <fmt/format.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>

#include "batch_store.h"
#include "rate_limits.h"
#include "scenario.h"
#include "server.h"
#include "stats.h"

// What the server's connections share: the state of the whole server and of one thread.
namespace switchyard::mock {

// Expected errors are values, not exceptions (a peer that goes away is no bug).
inline constexpr auto kAsTuple = boost::asio::as_tuple(boost::asio::use_awaitable);

// State shared by every thread for the server's lifetime. Each member synchronises itself.
struct Shared final {
    ServerOptions options;
    ScenarioStore scenarios;
    Stats stats;
    RateLimits rate_limits;
    batches::Store batches;  // the Batch APIs' files and batches
};

// One thread: its io_context and the randomness its connections use. Only touched from that
// thread once Run starts.
class Worker final {
  public:
    Worker(std::uint64_t fault_seed, std::uint64_t id_seed)
        : fault_rng_(fault_seed), id_rng_(id_seed) {}

    boost::asio::io_context& io() { return io_; }

    // True with probability `p`.
    bool Roll(double p) { return std::uniform_real_distribution<double>(0, 1)(fault_rng_) < p; }

    // Appends 32 lowercase hex digits, unique per request for all practical purposes.
    void AppendId(std::string& out) {
        const std::uint64_t high = id_rng_();
        const std::uint64_t low = id_rng_();
        fmt::format_to(std::back_inserter(out), "{:016x}{:016x}", high, low);
    }

  private:
    std::mt19937_64 fault_rng_;
    std::mt19937_64 id_rng_;
    // Last member: destroyed first, together with the connections it still owns.
    boost::asio::io_context io_{1};
};

}  // namespace switchyard::mock
