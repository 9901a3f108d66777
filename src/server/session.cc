#include "server/session.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <exception>

#include "api/local_reply.h"
#include "core/names.h"
#include "server/admin_handlers.h"
#include "server/batch_handlers.h"
#include "server/chat_handler.h"
#include "server/http_io.h"
#include "server/key_admin.h"
#include "server/request_trace.h"

namespace switchyard::server {
namespace {

constexpr std::uint32_t kMaxRequestHeaderBytes = 64 * 1024;

using RequestParser = http::request_parser<http::string_body, RequestAllocator>;

struct Route {
    std::string_view path;
    http::verb method;
    enum Kind {
        kChat,
        kMessages,
        kEmbeddings,
        kResponses,
        kModels,
        kLive,
        kReady,
        kMetrics,
        kStatus,
        kDashboard
    } kind;
};

constexpr Route kRoutes[] = {
    {"/v1/chat/completions", http::verb::post, Route::kChat},
    {"/chat/completions", http::verb::post, Route::kChat},
    {"/v1/messages", http::verb::post, Route::kMessages},
    {"/v1/embeddings", http::verb::post, Route::kEmbeddings},
    {"/embeddings", http::verb::post, Route::kEmbeddings},
    {"/v1/responses", http::verb::post, Route::kResponses},
    {"/responses", http::verb::post, Route::kResponses},
    {"/v1/models", http::verb::get, Route::kModels},
    {"/models", http::verb::get, Route::kModels},
    {"/health/live", http::verb::get, Route::kLive},
    {"/health/ready", http::verb::get, Route::kReady},
    {"/metrics", http::verb::get, Route::kMetrics},
    {"/status", http::verb::get, Route::kStatus},
    {"/dashboard", http::verb::get, Route::kDashboard},
};

// "/admin/deployments/{name}/enable" -> name.
std::optional<std::string_view> EnablePath(std::string_view path) {
    constexpr std::string_view kPrefix = "/admin/deployments/";
    constexpr std::string_view kSuffix = "/enable";
    if (!path.starts_with(kPrefix) || !path.ends_with(kSuffix)) return std::nullopt;
    path.remove_prefix(kPrefix.size());
    path.remove_suffix(kSuffix.size());
    if (path.empty()) return std::nullopt;
    return path;
}

// "/v1/models/{id}" (or "/models/{id}") -> id.
std::optional<std::string_view> ModelPath(std::string_view path) {
    for (const std::string_view prefix : {"/v1/models/", "/models/"}) {
        if (path.starts_with(prefix) && path.size() > prefix.size()) {
            return path.substr(prefix.size());
        }
    }
    return std::nullopt;
}

asio::awaitable<void> Dispatch(RequestContext& ctx) {
    if (const auto name = EnablePath(ctx.path); name && ctx.request.method() == http::verb::post) {
        // Names may carry '@' and ':' (name@host:port), which clients percent-encode.
        bool decoded = false;
        std::string deployment = core::PercentDecode(*name, decoded);
        if (!decoded) deployment = *name;  // not a valid escape: no deployment has that name
        co_await ServeEnable(ctx, deployment);
        co_return;
    }
    if (ctx.path == "/admin/reload" && ctx.request.method() == http::verb::post) {
        co_await ServeReload(ctx);
        co_return;
    }
    if (ctx.path == "/admin/drills" && ctx.request.method() == http::verb::get) {
        co_await ServeDrills(ctx);
        co_return;
    }
    if (ctx.path == "/admin/state" && ctx.request.method() == http::verb::get) {
        co_await ServeStateExport(ctx);
        co_return;
    }
    constexpr std::string_view kKeys = "/admin/keys";
    if (ctx.path == kKeys && ctx.request.method() == http::verb::get) {
        co_await ServeListKeys(ctx);
        co_return;
    }
    if (ctx.path == kKeys && ctx.request.method() == http::verb::post) {
        co_await ServeAddKey(ctx);
        co_return;
    }
    if (ctx.path.size() > kKeys.size() + 1 && ctx.path.starts_with(kKeys) &&
        ctx.path[kKeys.size()] == '/' && ctx.request.method() == http::verb::delete_) {
        const std::string name = ctx.path.substr(kKeys.size() + 1);
        co_await ServeDeleteKey(ctx, name);
        co_return;
    }
    if (IsBatchApiPath(ctx.path)) {
        co_await ServeBatchApi(ctx);
        co_return;
    }
    if (const auto id = ModelPath(ctx.path); id && ctx.request.method() == http::verb::get) {
        // The SDKs percent-encode the id (names may carry '/' or '@').
        bool decoded = false;
        std::string model = core::PercentDecode(*id, decoded);
        if (!decoded) model = *id;
        co_await ServeModels(ctx, std::move(model));
        co_return;
    }
    const Route* route = nullptr;
    for (const Route& r : kRoutes) {
        if (r.path == ctx.path) route = &r;
    }
    if (route == nullptr) {
        ctx.record.route = "not_found";
        const core::LocalError error{
            core::ErrorKind::kRouteNotFound,
            "Invalid URL (" + std::string(ctx.request.method_string()) + " " + ctx.path + ")"};
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    if (route->method != ctx.request.method()) {
        ctx.record.route = "method_not_allowed";
        ctx.reply_headers.emplace_back("allow", std::string(http::to_string(route->method)));
        const core::LocalError error{core::ErrorKind::kMethodNotAllowed,
                                     "Method " + std::string(ctx.request.method_string()) +
                                         " is not allowed on " + ctx.path + "; use " +
                                         std::string(http::to_string(route->method)) + "."};
        co_await WriteLocalError(ctx, error);
        co_return;
    }
    switch (route->kind) {
        case Route::kChat:
            co_await ServeChat(ctx);
            break;
        case Route::kMessages:
            co_await ServeMessages(ctx);
            break;
        case Route::kEmbeddings:
            co_await ServeEmbeddings(ctx);
            break;
        case Route::kResponses:
            co_await ServeResponses(ctx);
            break;
        case Route::kModels:
            co_await ServeModels(ctx);
            break;
        case Route::kLive:
            co_await ServeHealth(ctx, /*readiness=*/false);
            break;
        case Route::kReady:
            co_await ServeHealth(ctx, /*readiness=*/true);
            break;
        case Route::kMetrics:
            co_await ServeMetrics(ctx);
            break;
        case Route::kStatus:
            co_await ServeStatus(ctx);
            break;
        case Route::kDashboard:
            co_await ServeDashboard(ctx);
            break;
    }
}

// The answer to a request whose handler threw: a 500 in the client's wire format when nothing
// was sent yet, an error event and a clean end when a stream was open, nothing when the answer
// was complete. The connection closes afterwards; an error line goes to stderr.
asio::awaitable<void> AnswerFailure(RequestContext& ctx, std::string what) {
    ctx.keep_alive = false;
    ctx.error = "internal error: " + what;
    fmt::print(
        stderr, "{}\n",
        boost::json::serialize(boost::json::object{
            {"level", "error"}, {"event", "internal_error"}, {"path", ctx.path}, {"error", what}}));
    if (ctx.stream_open) {
        const std::string event = api::StreamErrorEvent(
            ctx.wire, "Switchyard failed while relaying the stream; the answer is incomplete.",
            ctx.next_sequence);
        const Reply end{ctx.record.status, nullptr, event, Reply::Framing::kStream, true};
        co_await Respond(ctx, end);
        co_return;
    }
    if (ctx.record.status != 0) co_return;
    const core::LocalError error{
        core::ErrorKind::kInternal,
        "Switchyard failed while handling the request. It may be retried."};
    co_await WriteLocalError(ctx, error);
    ctx.error = "internal error: " + what;  // the log says what failed, not what the client read
}

// Runs the handler. Whatever it throws is caught here, at the session boundary, so every request
// that entered gets exactly one answer (and its log line, and its gauges back).
asio::awaitable<void> Handle(RequestContext& ctx) {
    std::string what;
    try {
        co_await Dispatch(ctx);
        co_return;
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
        what = "unknown exception";
    }
    co_await AnswerFailure(ctx, std::move(what));
}

// Records one finished request in metrics and the access log.
void Finish(RequestContext& ctx) {
    ServerContext& context = ctx.Context();
    observe::RequestRecord& r = ctx.record;
    r.method = ctx.request.method_string();
    r.path = ctx.path;
    r.model_group = ctx.model_group;
    r.deployment = ctx.deployment;
    r.region = ctx.region;
    r.key = ctx.key_name;
    r.upstream_request_id = ctx.upstream_request_id;
    r.error = ctx.error;
    r.latency_seconds = std::chrono::duration<double>(context.clock.Now() - ctx.start).count();
    context.metrics.Record(ctx.worker.index, r);
    context.access_log.Write(ctx.worker.index, r);
    if (ctx.trace) ctx.trace->Finish(ctx);
}

// Answers a request that could not be read whole; the connection closes afterwards.
asio::awaitable<void> RejectUnreadable(Worker& worker, beast::tcp_stream& stream,
                                       upstream::Watch& watch, const RequestParser& parser,
                                       const boost::system::error_code& ec,
                                       std::chrono::steady_clock::time_point start) {
    core::LocalError error;
    if (ec == http::error::body_limit) {
        const std::string_view target = parser.get().target();
        const bool batch = target == "/v1/files" || target == "/v1/messages/batches";
        const auto config = worker.context.Config();
        error = {core::ErrorKind::kPayloadTooLarge,
                 batch ? "The upload exceeds batches.max_file_bytes (" +
                             std::to_string(config->batches.max_file_bytes) + " bytes)."
                       : "Request body exceeds the limit of " +
                             std::to_string(config->server.max_body_bytes) + " bytes."};
    } else if (ec == http::error::header_limit) {
        error = {core::ErrorKind::kInvalidRequest, "Request headers are too large."};
    } else if (ec.category() == make_error_code(http::error::bad_method).category()) {
        error = {core::ErrorKind::kInvalidRequest, "Malformed HTTP request: " + ec.message() + "."};
    } else {
        co_return;  // timeout or connection trouble: nobody to answer
    }
    RequestContext ctx{worker, stream, watch, {}, {}, false, start, {}};
    ctx.record.start = worker.context.clock.WallNow();
    // The header may be incomplete; whatever was parsed of it names the request in the log.
    ctx.request.base() = parser.get().base();
    ctx.path = core::Printable(ctx.request.target().substr(0, ctx.request.target().find('?')));
    if (ctx.path == "/v1/messages") ctx.wire = api::Wire::kAnthropic;
    ctx.record.route = "rejected";
    co_await WriteLocalError(ctx, error);
    Finish(ctx);
}

// Reserves `bytes` of request body (its Content-Length before it is read, a chunked body's size
// once read); a refusal to answer, when the bodies in flight are over a bound.
std::optional<core::LocalError> ReserveBody(Worker& worker, const RequestParser& parser,
                                            std::uint64_t length,
                                            limits::BodyBudget::Reservation& reservation) {
    ServerContext& context = worker.context;
    if (context.bodies == nullptr) return std::nullopt;
    const config::ServerConfig& server = context.Config()->server;
    const auto bytes = static_cast<std::size_t>(length);
    const std::uint64_t client = std::hash<std::string_view>()(PresentedKey(parser.get()));
    switch (context.bodies->Reserve(client, bytes, server.max_body_bytes_in_flight,
                                    server.max_body_bytes_in_flight_per_key, reservation)) {
        case limits::BodyBudget::Refusal::kNone:
            return std::nullopt;
        case limits::BodyBudget::Refusal::kClient:
            return core::LocalError{
                core::ErrorKind::kRateLimited,
                fmt::format("This client has {} bytes of request bodies in flight; with this one "
                            "it would pass server.max_body_bytes_in_flight_per_key ({}). Retry "
                            "once one of them is answered.",
                            context.bodies->InFlightOf(client),
                            server.max_body_bytes_in_flight_per_key)};
        case limits::BodyBudget::Refusal::kTotal:
            break;
    }
    return core::LocalError{
        core::ErrorKind::kOverloaded,
        fmt::format("Switchyard has {} bytes of request bodies in flight; with "
                    "this one it would pass server.max_body_bytes_in_flight "
                    "({}). Retry shortly.",
                    context.bodies->InFlight(), server.max_body_bytes_in_flight)};
}

// Answers a request refused before its body was read; the connection closes afterwards.
asio::awaitable<void> RejectBody(Worker& worker, beast::tcp_stream& stream, upstream::Watch& watch,
                                 const RequestParser& parser, const core::LocalError& error,
                                 std::chrono::steady_clock::time_point start) {
    RequestContext ctx{worker, stream, watch, {}, {}, false, start, {}};
    ctx.record.start = worker.context.clock.WallNow();
    ctx.request.base() = parser.get().base();
    ctx.path = core::Printable(ctx.request.target().substr(0, ctx.request.target().find('?')));
    if (ctx.path == "/v1/messages") ctx.wire = api::Wire::kAnthropic;
    ctx.record.route = "refused";
    ctx.reply_headers.emplace_back("retry-after", "1");
    co_await WriteLocalError(ctx, error);
    Finish(ctx);
}

// A connection's place in its worker's session list and in the connections gauge, given back
// however the session ends.
class SessionEntry final {
  public:
    SessionEntry(Worker& worker, beast::tcp_stream& stream) : worker_(worker) {
        worker_.sessions.push_front({&stream, false});
        handle_ = worker_.sessions.begin();
        worker_.context.metrics.AddConnections(1);
    }
    SessionEntry(const SessionEntry&) = delete;
    SessionEntry& operator=(const SessionEntry&) = delete;
    ~SessionEntry() {
        worker_.sessions.erase(handle_);
        worker_.context.metrics.AddConnections(-1);
    }
    SessionHandle& operator*() { return *handle_; }
    SessionHandle* operator->() { return &*handle_; }

  private:
    Worker& worker_;
    std::list<SessionHandle>::iterator handle_;
};

// One request in the in-flight gauge, for as long as it is handled.
class InFlightRequest final {
  public:
    explicit InFlightRequest(observe::Metrics& metrics) : metrics_(metrics) {
        metrics_.AddInFlight(1);
    }
    InFlightRequest(const InFlightRequest&) = delete;
    InFlightRequest& operator=(const InFlightRequest&) = delete;
    ~InFlightRequest() { metrics_.AddInFlight(-1); }

  private:
    observe::Metrics& metrics_;
};

}  // namespace

asio::awaitable<void> RunSession(tcp::socket socket, Worker* worker) {
    ServerContext& context = worker->context;
    const std::shared_ptr<const config::Config> config = context.Config();  // for this connection
    const config::ServerConfig& limits = config->server;
    boost::system::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    beast::tcp_stream stream(std::move(socket));
    SessionEntry handle(*worker, stream);
    beast::flat_buffer buffer;
    bool lingering_close = false;
    upstream::Watch watch(worker->watchdog);
    std::array<std::byte, 1024> arena_buffer;

    for (;;) {
        handle->busy = false;
        if (buffer.size() == 0) {
            // Idle keep-alive: wait for the next request's first byte.
            watch.Arm(stream.socket(), context.clock.Now() + limits.idle_timeout);
            auto [ec, n] = co_await stream.async_read_some(buffer.prepare(8192), kTuple);
            watch.Disarm();
            if (ec) break;
            buffer.commit(n);
        }
        handle->busy = true;
        const auto start = context.clock.Now();
        // The request's header fields take one arena instead of an allocation each.
        std::pmr::monotonic_buffer_resource arena(arena_buffer.data(), arena_buffer.size());
        RequestParser parser(std::piecewise_construct, std::make_tuple(),
                             std::make_tuple(RequestAllocator(&arena)));
        parser.body_limit(limits.max_body_bytes);
        parser.header_limit(kMaxRequestHeaderBytes);
        watch.Arm(stream.socket(), start + limits.header_timeout);
        auto [read_ec, read] = co_await http::async_read_header(stream, buffer, parser, kTuple);
        limits::BodyBudget::Reservation body_bytes;
        if (!read_ec && parser.get().method() == http::verb::post &&
            (parser.get().target() == "/v1/files" ||
             parser.get().target() == "/v1/messages/batches")) {
            // A batch's file or requests may be larger than any single request.
            const std::uint64_t limit = std::max<std::uint64_t>(
                limits.max_body_bytes, config->batches.max_file_bytes + 65536);
            parser.body_limit(limit);
            // A chunked upload's size is known only once read: it reserves the most it may be
            // first, so many of them cannot pass the bodies-in-flight bound meanwhile.
            if (!parser.content_length() && !parser.is_done()) {
                const std::uint64_t per_key = limits.max_body_bytes_in_flight_per_key;
                const std::uint64_t most = per_key > 0 ? std::min(limit, per_key) : limit;
                if (const auto refused = ReserveBody(*worker, parser, most, body_bytes)) {
                    watch.Disarm();
                    co_await RejectBody(*worker, stream, watch, parser, *refused, start);
                    lingering_close = true;
                    break;
                }
            }
        }
        if (!read_ec && !parser.is_done()) {
            // A body of known length is refused before it is read.
            const auto refused =
                parser.content_length()
                    ? ReserveBody(*worker, parser, *parser.content_length(), body_bytes)
                    : std::nullopt;
            if (refused) {
                watch.Disarm();
                co_await RejectBody(*worker, stream, watch, parser, *refused, start);
                lingering_close = true;
                break;
            }
            // A client that sent `Expect: 100-continue` waits for a go-ahead before the body
            // (RFC 9110 section 10.1.1); the header timeout covers the body too.
            if (parser.get().version() >= 11 &&
                beast::iequals(parser.get()[http::field::expect], "100-continue")) {
                static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
                auto [continue_ec, sent] =
                    co_await asio::async_write(stream, asio::buffer(kContinue), kTuple);
                (void)sent;
                read_ec = continue_ec;
            }
            if (!read_ec) {
                auto [body_ec, body_read] =
                    co_await http::async_read(stream, buffer, parser, kTuple);
                (void)body_read;
                read_ec = body_ec;
            }
        }
        (void)read;
        watch.Disarm();
        if (read_ec) {
            co_await RejectUnreadable(*worker, stream, watch, parser, read_ec, start);
            lingering_close = true;
            break;
        }
        if (!parser.content_length() && !parser.get().body().empty() && body_bytes.Bytes() == 0) {
            // A chunked body's length is known once it is read (within server.max_body_bytes).
            if (const auto refused =
                    ReserveBody(*worker, parser, parser.get().body().size(), body_bytes)) {
                co_await RejectBody(*worker, stream, watch, parser, *refused, start);
                break;
            }
        }
        const InFlightRequest in_flight(context.metrics);
        RequestContext ctx{*worker, stream, watch, parser.release(), {}, true, start, {}};
        ctx.record.start = context.clock.WallNow();
        ctx.keep_alive = ctx.request.keep_alive() && !context.draining.load();
        const std::string_view target = ctx.request.target();
        // Bytes outside visible ASCII are escaped: the path is echoed in error bodies and log
        // lines.
        ctx.path = core::Printable(target.substr(0, target.find('?')));
        co_await Handle(ctx);
        Finish(ctx);
        // Draining: a keep-alive request that started before the signal ends the connection too.
        if (!ctx.keep_alive || context.draining.load(std::memory_order_relaxed)) break;
    }
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    if (lingering_close) {
        // The client may still be sending a body we refused. Closing with unread bytes would make
        // the kernel send RST and could destroy our reply in flight (RFC 9112 section 9.6), so
        // read and discard until the client closes or a second passes.
        watch.Arm(stream.socket(), context.clock.Now() + std::chrono::seconds(1));
        for (;;) {
            buffer.clear();
            auto [ec, n] = co_await stream.async_read_some(buffer.prepare(65536), kTuple);
            if (ec) break;
        }
    }
    stream.close();
}

}  // namespace switchyard::server
