// switchyard-openloop: an open-loop HTTP/1.1 load generator for the benchmarks. Requests are
// scheduled at a fixed rate, independently of the answers, spread over keep-alive connections;
// each latency is measured from the request's scheduled time, so time spent waiting behind a slow
// answer counts (no coordinated omission). Closed-loop generators such as wrk measure queueing at
// the bottleneck instead once a proxy saturates.
//
//   switchyard-openloop HOST PORT PATH BODY_FILE RATE SECONDS CONNECTIONS
//
// Prints one line: "OPENLOOP sent=N done=N failed=N p50_us=.. p90_us=.. p99_us=.. max_us=..".
// Only Content-Length answers are read (JSON); anything else is an error.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Connection {
    int fd = -1;
    std::deque<Clock::time_point> waiting;  // scheduled times of requests not yet sent
    bool busy = false;                      // a request is on the wire
    Clock::time_point sent_for;             // scheduled time of that request
    std::string in;
};

int Connect(const char* host, int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, host, &addr.sin_addr);
    // Non-blocking connect: on loopback it completes before the first request (main waits).
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
        std::perror("connect");
        std::exit(1);
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// The length of a complete response at the start of `in`, or 0 while it is incomplete; -1 for
// something that is not a Content-Length answer.
long CompleteResponse(const std::string& in, int& status) {
    const std::size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) return 0;
    status = std::atoi(in.c_str() + 9);
    std::size_t at = 0;
    long length = -1;
    while (at < end) {
        const std::size_t eol = in.find("\r\n", at);
        const std::string line = in.substr(at, eol - at);
        if (line.size() > 15 && strncasecmp(line.c_str(), "content-length:", 15) == 0) {
            length = std::atol(line.c_str() + 15);
        }
        at = eol + 2;
    }
    if (length < 0) return -1;
    const std::size_t total = end + 4 + static_cast<std::size_t>(length);
    return in.size() >= total ? static_cast<long>(total) : 0;
}

// The requests in flight and what came of them.
struct Load {
    const std::string& request;
    std::vector<long> latencies;  // microseconds, from each request's scheduled time
    long done = 0;
    long errors = 0;

    // Sends the connection's next waiting request, unless one is on the wire.
    void SendNext(Connection& c) {
        if (c.busy || c.waiting.empty()) return;
        c.sent_for = c.waiting.front();
        c.waiting.pop_front();
        c.busy = true;
        std::size_t off = 0;
        while (off < request.size()) {
            const ssize_t n = write(c.fd, request.data() + off, request.size() - off);
            if (n > 0) {
                off += static_cast<std::size_t>(n);
            } else if (n < 0 && errno != EAGAIN) {
                ++errors;
                return;
            }
        }
    }

    // Reads what arrived on `c` and takes every complete answer, sending the next request after
    // each.
    void ReadAnswers(Connection& c) {
        char buffer[65536];
        for (;;) {
            const ssize_t got = read(c.fd, buffer, sizeof buffer);
            if (got <= 0) break;
            c.in.append(buffer, static_cast<std::size_t>(got));
        }
        int status = 0;
        long length = 0;
        while (c.busy && (length = CompleteResponse(c.in, status)) != 0) {
            if (length < 0 || status < 200 || status >= 300) {
                ++errors;
                c.in.clear();
            } else {
                c.in.erase(0, static_cast<std::size_t>(length));
                ++done;
                latencies.push_back(static_cast<long>(
                    std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - c.sent_for)
                        .count()));
            }
            c.busy = false;
            SendNext(c);
        }
    }

    // The result line; not answered in time counts as failed, like an error.
    void Report(long sent, long total) {
        std::sort(latencies.begin(), latencies.end());
        const auto pct = [&](double p) -> long {
            if (latencies.empty()) return -1;
            const auto at = static_cast<std::size_t>(p * static_cast<double>(latencies.size() - 1));
            return latencies[at];
        };
        std::printf(
            "OPENLOOP sent=%ld done=%ld failed=%ld p50_us=%ld p90_us=%ld p99_us=%ld max_us=%ld\n",
            sent, done, total - done, pct(0.5), pct(0.9), pct(0.99),
            latencies.empty() ? -1 : latencies.back());
    }
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 8) {
        std::fprintf(stderr,
                     "usage: %s HOST PORT PATH BODY_FILE RATE SECONDS CONNECTIONS\n"
                     "  OPENLOOP_HEADER='Name: value' adds a header to every request\n",
                     argv[0]);
        return 2;
    }
    const char* host = argv[1];
    const int port = std::atoi(argv[2]);
    const std::string path = argv[3];
    std::ifstream file(argv[4], std::ios::binary);
    std::stringstream body_text;
    body_text << file.rdbuf();
    const std::string body = body_text.str();
    const double rate = std::atof(argv[5]);
    const double seconds = std::atof(argv[6]);
    const int count = std::atoi(argv[7]);
    if (rate <= 0 || seconds <= 0 || count <= 0 || body.empty()) {
        std::fprintf(stderr, "bad arguments\n");
        return 2;
    }
    // OPENLOOP_HEADER: one more header line for every request, e.g. a client key.
    const char* extra = std::getenv("OPENLOOP_HEADER");
    const std::string request =
        "POST " + path + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" +
        (extra != nullptr && *extra != '\0' ? std::string(extra) + "\r\n" : std::string()) +
        "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;

    const int ep = epoll_create1(0);
    std::vector<Connection> connections(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < connections.size(); ++i) {
        connections[i].fd = Connect(host, port);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = i;
        epoll_ctl(ep, EPOLL_CTL_ADD, connections[i].fd, &ev);
    }
    usleep(100'000);  // let the connections complete

    const auto interval = std::chrono::duration<double>(1.0 / rate);
    const long total = static_cast<long>(rate * seconds);
    Load load{request, {}};
    load.latencies.reserve(static_cast<std::size_t>(total));
    long sent = 0, next_connection = 0;
    const Clock::time_point start = Clock::now();
    const Clock::time_point give_up = start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(seconds + 10));

    while (load.done + load.errors < total && Clock::now() < give_up) {
        // Schedule everything due by now.
        const Clock::time_point now = Clock::now();
        while (sent < total) {
            const Clock::time_point due =
                start + std::chrono::duration_cast<Clock::duration>(interval * sent);
            if (due > now) break;
            Connection& c = connections[static_cast<std::size_t>(next_connection)];
            next_connection = (next_connection + 1) % count;
            c.waiting.push_back(due);
            ++sent;
            load.SendNext(c);
        }
        // Sleep until the next request is due (to the microsecond: no busy loop competing with
        // the server for the CPU) or an answer arrives.
        timespec timeout{0, 10'000'000};
        if (sent < total) {
            const Clock::time_point due =
                start + std::chrono::duration_cast<Clock::duration>(interval * sent);
            const std::int64_t wait = std::max<std::int64_t>(
                0,
                std::chrono::duration_cast<std::chrono::nanoseconds>(due - Clock::now()).count());
            timeout = {static_cast<time_t>(wait / 1'000'000'000),
                       static_cast<long>(wait % 1'000'000'000)};
        }
        epoll_event events[256];
        const int n = epoll_pwait2(ep, events, 256, &timeout, nullptr);
        for (int i = 0; i < n; ++i) load.ReadAnswers(connections[events[i].data.u64]);
    }
    load.Report(sent, total);
    return load.errors == 0 && load.done == total ? 0 : 1;
}
