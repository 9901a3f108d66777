#include "state/redis_connection.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <array>

namespace switchyard::state {
namespace {

// Calls in a row that got no reply in time before the connection is taken for dead and
// reconnected (a peer that vanished without closing its socket).
constexpr int kTimeoutsBeforeReconnect = 16;
// Commands sent and not yet answered, beyond which new ones are not sent (Redis is far behind;
// requests decide locally, and nothing piles up here or there).
constexpr std::size_t kMaxPending = 4096;
// A PING every beat on every connection (a subscriber's is answered with a pong push): a
// connection that hears nothing for kBeatsUnheard beats is taken for dead and reconnected, so a
// peer that vanished without closing is noticed within about three seconds even on a quiet
// subscriber, where TCP keep-alive would take minutes.
constexpr std::chrono::milliseconds kBeat{1'000};
constexpr int kBeatsUnheard = 2;

}  // namespace

std::string RedisEndpoint::Display() const {
    return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
           std::to_string(port);
}

RedisConnection::RedisConnection(asio::any_io_executor executor, RedisEndpoint endpoint,
                                 RedisOptions options, asio::ssl::context* tls,
                                 RedisObserver* observer, std::uint64_t seed)
    : executor_(std::move(executor)),
      endpoint_(std::move(endpoint)),
      options_(options),
      tls_context_(tls),
      observer_(observer),
      rng_(seed),
      backoff_(executor_) {}

void RedisConnection::Start() {
    asio::co_spawn(executor_, Run(), [self = shared_from_this()](std::exception_ptr) {});
}

void RedisConnection::Stop() {
    stopped_ = true;
    backoff_.cancel();
    Close();
}

asio::awaitable<RedisConnection::Reply> RedisConnection::Call(std::vector<std::string> args,
                                                              std::chrono::milliseconds timeout) {
    // Down, or so far behind that waiting would only add to the backlog: decided locally.
    if (!up_ || pending_.size() >= kMaxPending) co_return std::nullopt;
    auto waiter = std::make_shared<Waiter>(executor_);
    Enqueue(args, {waiter, nullptr});
    waiter->timer.expires_after(timeout);
    auto [ec] = co_await waiter->timer.async_wait(kTuple);
    (void)ec;  // cancelled: the reply came (or the connection failed)
    const bool answered = waiter->done;
    waiter->done = true;  // a reply that comes later is dropped
    if (!answered && up_ && ++timeouts_in_a_row_ >= kTimeoutsBeforeReconnect) Close();
    co_return std::move(waiter->reply);
}

void RedisConnection::Send(std::vector<std::string> args,
                           std::function<void(const RespValue&)> on_error) {
    if (!up_ || pending_.size() >= kMaxPending) return;
    Enqueue(args, {nullptr, std::move(on_error)});
}

void RedisConnection::Enqueue(const std::vector<std::string>& args, Pending pending) {
    EncodeCommand(args, out_);
    if (!subscriber_) pending_.push_back(std::move(pending));
    Flush();
}

void RedisConnection::Flush() {
    if (write_active_ || out_.empty() || !up_) return;
    write_active_ = true;
    asio::co_spawn(executor_, WriteLoop(generation_),
                   [self = shared_from_this()](std::exception_ptr) {});
}

asio::awaitable<void> RedisConnection::WriteLoop(unsigned generation) {
    while (!out_.empty() && generation == generation_) {
        writing_.swap(out_);
        out_.clear();
        boost::system::error_code ec;
        co_await WriteAll(writing_, ec);
        writing_.clear();
        if (ec) {
            if (generation == generation_) Close();
            break;
        }
    }
    write_active_ = false;
    Flush();  // what a newer connection queued meanwhile
}

void RedisConnection::Deliver(RespValue reply) {
    timeouts_in_a_row_ = 0;
    beats_unheard_ = 0;
    if (subscriber_) {
        if (on_push_) on_push_(reply);
        return;
    }
    if (pending_.empty()) return;  // not a reply to us; a misbehaving server
    Pending pending = std::move(pending_.front());
    pending_.pop_front();
    const std::shared_ptr<Waiter>& waiter = pending.waiter;
    if (waiter && !waiter->done) {
        waiter->reply = std::move(reply);
        waiter->done = true;
        waiter->timer.cancel();
    } else if (!waiter && pending.on_error && reply.IsError()) {
        pending.on_error(reply);  // may send again: `pending` is off the queue already
    }
}

void RedisConnection::FailPending() {
    for (const Pending& pending : pending_) {
        const std::shared_ptr<Waiter>& waiter = pending.waiter;
        if (waiter && !waiter->done) {
            waiter->done = true;
            waiter->timer.cancel();
        }
    }
    pending_.clear();
}

void RedisConnection::Close() {
    ++generation_;
    up_ = false;
    timeouts_in_a_row_ = 0;
    boost::system::error_code ignored;
    if (tls_) tls_->next_layer().close(ignored);
    if (socket_) socket_->close(ignored);
    FailPending();
    out_.clear();
}

asio::awaitable<std::size_t> RedisConnection::ReadSome(asio::mutable_buffer buffer,
                                                       boost::system::error_code& ec) {
    if (tls_) {
        auto [e, n] = co_await tls_->async_read_some(buffer, kTuple);
        ec = e;
        co_return n;
    }
    auto [e, n] = co_await socket_->async_read_some(buffer, kTuple);
    ec = e;
    co_return n;
}

asio::awaitable<void> RedisConnection::WriteAll(std::string_view bytes,
                                                boost::system::error_code& ec) {
    if (tls_) {
        auto [e, n] = co_await asio::async_write(*tls_, asio::buffer(bytes), kTuple);
        ec = e;
        co_return;
    }
    auto [e, n] = co_await asio::async_write(*socket_, asio::buffer(bytes), kTuple);
    ec = e;
}

asio::awaitable<std::string> RedisConnection::Connect() {
    tls_.reset();
    socket_.reset();
    reader_ = RespReader{};
    tcp::resolver resolver(executor_);
    auto [resolve_ec, results] =
        co_await resolver.async_resolve(endpoint_.host, std::to_string(endpoint_.port), kTuple);
    if (resolve_ec) co_return "cannot resolve " + endpoint_.host + ": " + resolve_ec.message();
    socket_.emplace(executor_);
    // The whole login has one deadline: a server that accepts and then says nothing is down too.
    // The flags outlive this frame: the timer's handler may run after it returned.
    const auto timed_out = std::make_shared<bool>(false);
    const auto over = std::make_shared<bool>(false);
    struct LoginOver {
        std::shared_ptr<bool> flag;
        ~LoginOver() { *flag = true; }
    } login_over{over};
    asio::steady_timer deadline(executor_);
    deadline.expires_after(options_.connect_timeout);
    deadline.async_wait([this, timed_out, over](const boost::system::error_code& ec) {
        if (ec || *over) return;
        *timed_out = true;
        boost::system::error_code ignored;
        if (tls_) tls_->next_layer().close(ignored);
        if (socket_) socket_->close(ignored);
    });
    auto [connect_ec, peer] = co_await asio::async_connect(*socket_, results, kTuple);
    (void)peer;
    if (connect_ec) {
        co_return *timed_out ? std::string("connect timed out") : connect_ec.message();
    }
    boost::system::error_code ignored;
    socket_->set_option(tcp::no_delay(true), ignored);
    socket_->set_option(asio::socket_base::keep_alive(true), ignored);
    if (endpoint_.tls) {
        tls_ = std::make_unique<asio::ssl::stream<tcp::socket>>(std::move(*socket_), *tls_context_);
        socket_.reset();
        SSL_set_tlsext_host_name(tls_->native_handle(), endpoint_.host.c_str());
        tls_->set_verify_callback(asio::ssl::host_name_verification(endpoint_.host));
        auto [tls_ec] = co_await tls_->async_handshake(asio::ssl::stream_base::client, kTuple);
        if (tls_ec)
            co_return *timed_out ? std::string("TLS handshake timed out")
                                 : "TLS handshake: " + tls_ec.message();
    }
    // Log in: AUTH and SELECT when configured, then PING, each answered in order.
    std::string login;
    int expected = 1;
    if (!endpoint_.password.empty()) {
        if (endpoint_.username.empty()) {
            EncodeCommand({"AUTH", endpoint_.password}, login);
        } else {
            EncodeCommand({"AUTH", endpoint_.username, endpoint_.password}, login);
        }
        ++expected;
    }
    if (endpoint_.db != 0) {
        EncodeCommand({"SELECT", std::to_string(endpoint_.db)}, login);
        ++expected;
    }
    EncodeCommand({"PING"}, login);
    boost::system::error_code ec;
    co_await WriteAll(login, ec);
    if (ec) co_return *timed_out ? std::string("login timed out") : "login: " + ec.message();
    std::array<char, 512> buffer;
    RespValue reply;
    for (int received = 0; received < expected;) {
        const RespReader::Status status = reader_.Next(reply);
        if (status == RespReader::Status::kError) co_return "not a Redis server";
        if (status == RespReader::Status::kValue) {
            // The server's message, which never contains the password.
            if (reply.IsError()) co_return "login refused: " + reply.text;
            ++received;
            continue;
        }
        const std::size_t n = co_await ReadSome(asio::buffer(buffer), ec);
        if (ec) co_return *timed_out ? std::string("login timed out") : "login: " + ec.message();
        reader_.Feed(std::string_view(buffer.data(), n));
    }
    co_return std::string();
}

asio::awaitable<std::string> RedisConnection::ReadReplies() {
    std::array<char, 16 * 1024> buffer;
    RespValue reply;
    for (;;) {
        // Replies already buffered (the login's read may have taken some).
        for (;;) {
            const RespReader::Status status = reader_.Next(reply);
            if (status == RespReader::Status::kError) co_return "protocol error";
            if (status == RespReader::Status::kIncomplete) break;
            Deliver(std::move(reply));
        }
        boost::system::error_code ec;
        const std::size_t n = co_await ReadSome(asio::buffer(buffer), ec);
        if (ec)
            co_return ec == asio::error::eof ? std::string("closed by the server") : ec.message();
        reader_.Feed(std::string_view(buffer.data(), n));
    }
}

asio::awaitable<void> RedisConnection::Heartbeat(unsigned generation) {
    asio::steady_timer beat(executor_);
    while (!stopped_ && generation == generation_) {
        beat.expires_after(kBeat);
        auto [ec] = co_await beat.async_wait(kTuple);
        (void)ec;
        if (stopped_ || generation != generation_) break;
        if (beats_unheard_ >= kBeatsUnheard) {
            Close();  // the reader fails and Run reconnects
            break;
        }
        ++beats_unheard_;
        Send({"PING"});
    }
}

asio::awaitable<void> RedisConnection::Run() {
    enum class Known { kNothing, kUp, kDown } known = Known::kNothing;
    bool ever_up = false;
    for (int failures = 0; !stopped_;) {
        std::string error;
        try {
            error = co_await Connect();
            if (stopped_) break;
            if (error.empty()) {
                up_ = true;
                failures = 0;
                if (observer_ != nullptr) {
                    observer_->ConnectionUp(known == Known::kDown, !ever_up);
                }
                ever_up = true;
                known = Known::kUp;
                if (on_up_) on_up_();
                Flush();
                beats_unheard_ = 0;
                asio::co_spawn(executor_, Heartbeat(generation_),
                               [self = shared_from_this()](std::exception_ptr) {});
                error = co_await ReadReplies();
            }
        } catch (const std::exception& e) {
            // A handler or an allocation failed: this connection starts again, it does not die.
            error = std::string("internal error: ") + e.what();
        }
        Close();
        if (stopped_) break;
        if (known != Known::kDown && observer_ != nullptr) observer_->ConnectionDown(error);
        known = Known::kDown;
        // Full jitter over an exponentially growing ceiling
        // (docs/resilience.md#backoff-jitter-and-deadlines).
        const std::chrono::milliseconds ceiling = std::min(
            options_.reconnect_max, std::chrono::milliseconds(options_.reconnect_min.count() *
                                                              (1LL << std::min(failures, 10))));
        std::uniform_int_distribution<std::int64_t> jitter(
            options_.reconnect_min.count(),
            std::max(ceiling.count(), options_.reconnect_min.count()));
        ++failures;
        backoff_.expires_after(std::chrono::milliseconds(jitter(rng_)));
        auto [ec] = co_await backoff_.async_wait(kTuple);
        (void)ec;
    }
}

}  // namespace switchyard::state
