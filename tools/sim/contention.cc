#include "contention.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "policy/backoff.h"
#include "virtual_time.h"

namespace switchyard::sim {

namespace {

using Duration = std::chrono::steady_clock::duration;

Duration Ms(double ms) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(ms));
}

class ContentionRun {
  public:
    ContentionRun(const ContentionSpec& spec, std::string_view strategy, int clients,
                  std::uint64_t seed)
        : spec_(spec), strategy_(strategy), loop_(clock_), rng_(seed), clients_(clients) {
        backoff_.base = std::chrono::milliseconds(static_cast<long long>(spec.base_ms));
        backoff_.cap = std::chrono::milliseconds(static_cast<long long>(spec.cap_ms));
    }

    ContentionRow Execute() {
        for (Client& c : clients_) {
            c.last_sleep = spec_.base_ms;
            Read(c, 0);
        }
        loop_.Run();
        return {std::string(strategy_), static_cast<int>(clients_.size()),
                static_cast<double>(calls_), clock_.ElapsedMs()};
    }

  private:
    struct Client {
        int retries = 0;
        double last_sleep = 0;
    };

    double Hop() { return std::abs(hop_(rng_)); }
    double Uniform(double low, double high) {
        return std::uniform_real_distribution<double>(low, high)(rng_);
    }

    double Sleep(Client& c) {
        const int n = ++c.retries;
        const double exponential = std::min(spec_.cap_ms, spec_.base_ms * std::pow(2.0, n));
        if (strategy_ == "none") return 0;
        if (strategy_ == "exponential") return exponential;
        if (strategy_ == "full") {
            return static_cast<double>(backoff_.Jittered(n, Uniform(0, 1)).count());
        }
        if (strategy_ == "equal") return exponential / 2 + Uniform(0, exponential / 2);
        if (strategy_ == "decorrelated") {
            c.last_sleep = std::min(spec_.cap_ms, Uniform(spec_.base_ms, c.last_sleep * 3));
            return c.last_sleep;
        }
        throw std::runtime_error("unknown strategy '" + std::string(strategy_) +
                                 "' (none, exponential, full, equal, decorrelated)");
    }

    // The read reaches the server after `sleep` and one hop, the answer returns, the write goes
    // out with the version read; its answer returns one more hop later.
    void Read(Client& c, double sleep) {
        loop_.After(Ms(sleep + Hop()), [this, &c] {
            const std::uint64_t seen = version_;
            loop_.After(Ms(Hop() + Hop()), [this, &c, seen] {
                ++calls_;
                const bool written = version_ == seen;
                if (written) ++version_;
                loop_.After(Ms(Hop()), [this, &c, written] {
                    if (!written) Read(c, Sleep(c));
                });
            });
        });
    }

    const ContentionSpec& spec_;
    std::string_view strategy_;
    VirtualClock clock_;
    EventLoop loop_;
    std::mt19937_64 rng_;
    std::normal_distribution<double> hop_{10.0, 2.0};
    policy::Backoff backoff_;
    std::vector<Client> clients_;
    std::uint64_t version_ = 0;
    std::uint64_t calls_ = 0;
};

}  // namespace

std::vector<ContentionRow> RunContention(const ContentionSpec& spec, std::uint64_t seed) {
    std::vector<ContentionRow> rows;
    for (const std::string& strategy : spec.strategies) {
        for (const int clients : spec.clients) {
            ContentionRow mean{strategy, clients, 0, 0};
            for (int r = 0; r < spec.repetitions; ++r) {
                ContentionRun run(spec, strategy, clients,
                                  seed * 1'000'003 + static_cast<std::uint64_t>(clients) * 1009 +
                                      static_cast<std::uint64_t>(r));
                const ContentionRow row = run.Execute();
                mean.calls += row.calls / spec.repetitions;
                mean.time_ms += row.time_ms / spec.repetitions;
            }
            rows.push_back(mean);
        }
    }
    return rows;
}

}  // namespace switchyard::sim
