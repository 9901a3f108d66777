#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/asio.h"
#include "state/resp.h"

namespace switchyard::state {

// Where a Redis server is and how to log in (from `state.url`, `state.password`, `state.tls`).
struct RedisEndpoint {
    std::string host = "127.0.0.1";
    std::uint16_t port = 6379;
    std::string username;  // ACL user; empty: the default user
    std::string password;  // empty: no AUTH
    int db = 0;
    bool tls = false;

    // "host:port", for logs (never the password).
    std::string Display() const;
};

struct RedisOptions {
    std::chrono::milliseconds connect_timeout{1'000};
    std::chrono::milliseconds reconnect_min{50};
    std::chrono::milliseconds reconnect_max{2'000};
};

// What a connection reports about itself, process-wide (every worker's connection shares one).
class RedisObserver {
  public:
    virtual ~RedisObserver() = default;
    // The connection came up (after its login); `after_failure`: it had been reported down;
    // `first`: it had never been up before.
    virtual void ConnectionUp(bool after_failure, bool first) = 0;
    // It failed to connect or was lost; `why` says what failed. Told once per failure episode.
    virtual void ConnectionDown(const std::string& why) = 0;
};

// One connection to Redis on one event loop (a worker's): commands are pipelined in the order
// they are sent and replies are matched to them in that order. It connects in the background,
// logs in (AUTH, SELECT), and reconnects after any failure with a jittered backoff between
// `reconnect_min` and `reconnect_max`. While it is down every call answers at once with nothing,
// so a caller never waits for a connection that is not there. Not thread-safe: every call is made
// on the connection's own executor. Stop() before destruction.
class RedisConnection final : public std::enable_shared_from_this<RedisConnection> {
  public:
    using Reply = std::optional<RespValue>;  // nullopt: no reply in time, or no connection

    RedisConnection(asio::any_io_executor executor, RedisEndpoint endpoint, RedisOptions options,
                    asio::ssl::context* tls, RedisObserver* observer, std::uint64_t seed);

    // Starts connecting; returns at once.
    void Start();
    // Closes the connection for good; calls waiting for a reply get nothing.
    void Stop();
    bool Up() const { return up_; }

    // Sends one command and waits for its reply at most `timeout`. A reply that comes later is
    // read and dropped. An error reply is a reply (RespValue::IsError).
    asio::awaitable<Reply> Call(std::vector<std::string> args, std::chrono::milliseconds timeout);
    // Sends one command without waiting (its reply is read and dropped). Dropped when down. With
    // `on_error`, an error reply is handed to it (on the connection's executor) before it is
    // dropped.
    void Send(std::vector<std::string> args,
              std::function<void(const RespValue&)> on_error = nullptr);

    // Runs after every (re)connect, before anything queued is sent. Set before Start().
    void OnUp(std::function<void()> on_up) { on_up_ = std::move(on_up); }
    // Subscriber mode: every reply goes to `on_push` instead of to a caller (Pub/Sub messages);
    // subscribe again in OnUp. Set before Start().
    void Subscribe(std::function<void(const RespValue&)> on_push) {
        subscriber_ = true;
        on_push_ = std::move(on_push);
    }

  private:
    struct Waiter {
        explicit Waiter(const asio::any_io_executor& executor) : timer(executor) {}
        asio::steady_timer timer;
        Reply reply;
        bool done = false;
    };
    // A command sent and not answered yet: a caller waits for its reply, or nobody does (the
    // reply is dropped, an error first handed to `on_error` when set).
    struct Pending {
        std::shared_ptr<Waiter> waiter;
        std::function<void(const RespValue&)> on_error;
    };

    asio::awaitable<void> Run();
    // Connects and logs in; the error says what failed (empty: up).
    asio::awaitable<std::string> Connect();
    asio::awaitable<std::string> ReadReplies();
    // Answers the oldest waiting call (or hands a push to on_push in subscriber mode).
    void Deliver(RespValue reply);
    void Flush();
    asio::awaitable<void> WriteLoop(unsigned generation);
    // PINGs the connection of `generation` every beat and closes it when nothing is heard back.
    asio::awaitable<void> Heartbeat(unsigned generation);
    void Enqueue(const std::vector<std::string>& args, Pending pending);
    // Fails every call still waiting for a reply and drops what was not sent.
    void FailPending();
    void Close();

    asio::awaitable<std::size_t> ReadSome(asio::mutable_buffer buffer,
                                          boost::system::error_code& ec);
    asio::awaitable<void> WriteAll(std::string_view bytes, boost::system::error_code& ec);

    asio::any_io_executor executor_;
    RedisEndpoint endpoint_;
    RedisOptions options_;
    asio::ssl::context* tls_context_;
    RedisObserver* observer_;
    std::mt19937_64 rng_;

    // The connection: a plain socket, or a TLS stream that owns its socket.
    std::optional<tcp::socket> socket_;
    std::unique_ptr<asio::ssl::stream<tcp::socket>> tls_;
    asio::steady_timer backoff_;
    RespReader reader_;
    std::deque<Pending> pending_;
    std::string out_;  // encoded, not yet written
    std::string writing_;
    bool write_active_ = false;
    bool up_ = false;
    bool stopped_ = false;
    int timeouts_in_a_row_ = 0;
    int beats_unheard_ = 0;    // PINGs sent since anything was heard
    unsigned generation_ = 0;  // bumped on every close: a writer of an old connection stops

    bool subscriber_ = false;
    std::function<void()> on_up_;
    std::function<void(const RespValue&)> on_push_;
};

}  // namespace switchyard::state
