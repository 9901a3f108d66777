#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario.h"

namespace switchyard::sim {

// The contention experiment of the AWS Architecture Blog's "Exponential Backoff And Jitter"
// (2015), rebuilt: N clients each make one successful optimistic-concurrency write to one row.
// An attempt reads the row's version and writes with it; the write fails when another write
// landed in between. Every one-way message takes |Normal(10 ms, 2 ms)|, the server answers at once,
// all clients start together, and a failed client sleeps by its strategy before its next read.
// Strategies (n = the retry's number, 1 for the first; e(n) = min(cap, base * 2^n)):
//   none: 0; exponential: e(n); full: Switchyard's policy::Backoff, uniform(0, e(n));
//   equal: e(n)/2 + uniform(0, e(n)/2); decorrelated: min(cap, uniform(base, 3 * last sleep)).
struct ContentionRow {
    std::string strategy;
    int clients = 0;
    double calls = 0;    // write attempts per run, mean over the repetitions
    double time_ms = 0;  // until the last client is done, mean
};

std::vector<ContentionRow> RunContention(const ContentionSpec& spec, std::uint64_t seed);

}  // namespace switchyard::sim
