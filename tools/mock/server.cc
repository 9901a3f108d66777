#include "server.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <csignal>
#include <random>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

#include "anthropic_wire.h"
#include "embeddings_wire.h"
#include "http_head.h"
#include "openai_wire.h"
#include "rate_limits.h"
#include "responses_wire.h"
#include "stats.h"
#include "structured_output.h"

namespace switchyard::mock {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;

namespace {

constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);

// Large enough for long-context requests (a context_length test may send megabytes).
constexpr std::uint64_t kBodyLimit = 64 * 1024 * 1024;
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
constexpr auto kTlsHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kTlsShutdownTimeout = std::chrono::seconds(1);

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kEventStream = "text/event-stream; charset=utf-8";

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// State shared by every thread for the server's lifetime.
struct Shared final {
    ServerOptions options;
    ScenarioStore scenarios;
    Stats stats;
    RateLimits rate_limits;
    std::optional<ssl::context> tls;
};

// One thread: its io_context and the randomness its connections use. Only touched from that
// thread once Run starts.
class Worker final {
  public:
    Worker(std::uint64_t fault_seed, std::uint64_t id_seed)
        : fault_rng_(fault_seed), id_rng_(id_seed) {}

    asio::io_context& io() { return io_; }

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
    asio::io_context io_{1};
};

std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

double MillisSinceEpoch(std::chrono::system_clock::time_point time) {
    return std::chrono::duration<double, std::milli>(time.time_since_epoch()).count();
}

std::optional<std::string_view> HeaderValue(const http::request<http::string_body>& request,
                                            std::string_view name) {
    const auto it = request.find(name);
    if (it == request.end()) return std::nullopt;
    return it->value();
}

bool IsChatPath(std::string_view path) {
    return path == "/v1/chat/completions" || path == "/chat/completions";
}

bool IsMessagesPath(std::string_view path) { return path == "/v1/messages"; }

bool IsEmbeddingsPath(std::string_view path) {
    return path == "/v1/embeddings" || path == "/embeddings";
}

bool IsResponsesPath(std::string_view path) {
    return path == "/v1/responses" || path == "/responses";
}

// The provider APIs the mock speaks, by path.
enum class Api {
    kChat,        // OpenAI's chat completions: /v1/chat/completions, /chat/completions
    kMessages,    // Anthropic's messages: /v1/messages
    kEmbeddings,  // OpenAI's embeddings: /v1/embeddings, /embeddings
    kResponses,   // OpenAI's responses: /v1/responses, /responses
};

std::optional<Api> ApiOf(std::string_view path) {
    if (IsChatPath(path)) return Api::kChat;
    if (IsMessagesPath(path)) return Api::kMessages;
    if (IsEmbeddingsPath(path)) return Api::kEmbeddings;
    if (IsResponsesPath(path)) return Api::kResponses;
    return std::nullopt;
}

std::string MockError(std::string_view message) {
    return openai::ErrorEnvelope(message, "mock_error");
}

enum class After {
    kKeepAlive,  // Read the next request.
    kClose,      // Close the connection gracefully.
    kGone,       // The connection was already reset or abandoned.
};

// Everything about one provider request that outlives its parsing.
struct Exchange final {
    std::chrono::system_clock::time_point arrival;
    std::chrono::steady_clock::time_point start;
    std::string request_id;
    std::string path;
    std::string model;
    int prompt_tokens = 1;
    int output_tokens = 0;  // Anthropic: generated so far, taken from the OTPM bucket at the end.
    // Set when the rate limiter rejected the request: the retry hint of its 429.
    std::optional<milliseconds> rate_limit_retry_after;
    bool keep_alive = true;
    Api api = Api::kChat;       // Of a provider path; kChat for any other path (OpenAI's 404).
    bool anthropic = false;     // Anthropic's Messages API (/v1/messages) rather than OpenAI's.
    std::string output_schema;  // the JSON schema the request asks for (empty: none)
};

// One downstream connection. Lives in the frame of RunSession; one request at a time.
template <class AsyncStream>
class Session final {
  public:
    static constexpr bool kTls = std::is_same_v<AsyncStream, TlsStream>;

    Session(AsyncStream stream, Shared& shared, Worker& worker)
        : stream_(std::move(stream)),
          shared_(shared),
          worker_(worker),
          timer_(stream_.get_executor()) {
        out_.reserve(4096);
    }

    asio::awaitable<void> Run();

  private:
    asio::awaitable<After> Dispatch();
    asio::awaitable<After> HandleAdmin();
    asio::awaitable<After> HandleProvider();
    asio::awaitable<After> SendStream(bool include_usage, const FaultSpec* fault);
    asio::awaitable<After> AnswerResponses(const responses::ResponsesRequest& request,
                                           const FaultSpec* fault);
    asio::awaitable<After> SendResponsesStream(const responses::Response& response,
                                               const FaultSpec* fault);
    asio::awaitable<After> AnswerMessages(const anthropic::MessagesRequest& message,
                                          const FaultSpec* fault);
    asio::awaitable<After> SendMessagesStream(const anthropic::MessagesRequest& message,
                                              const FaultSpec* fault);
    asio::awaitable<After> ReplyProvider(int status, std::string body, const FaultSpec* fault);
    // The reply to a request that asks for a JSON schema (empty: it asks for none).
    std::string StructuredText(const FaultSpec* fault) const {
        if (exchange_.output_schema.empty()) return {};
        boost::system::error_code ec;
        const boost::json::value schema = boost::json::parse(exchange_.output_schema, ec);
        if (ec) return {};
        return StructuredReply(schema, fault != nullptr && fault->invalid_output);
    }
    asio::awaitable<After> ReplyPlain(int status, std::string body, bool keep_alive,
                                      std::string_view allow = {});
    asio::awaitable<bool> SendEvent(milliseconds delay, bool last);
    asio::awaitable<bool> Emit(bool last);
    asio::awaitable<bool> SendEnd(milliseconds delay);
    asio::awaitable<bool> Write();
    asio::awaitable<void> Sleep(milliseconds duration);
    asio::awaitable<void> WaitForPeerClose();
    asio::awaitable<void> CloseGracefully();
    void Reset();

    void AppendProviderHead(int status, std::string_view content_type,
                            std::optional<std::size_t> content_length, const FaultSpec* fault);
    void Record(int status, std::string_view fault_text, std::string_view rate_limit = {});
    std::string ProviderMockError(std::string_view message) const;
    std::string ProviderErrorBody(int status, std::optional<NamedError> error) const;
    void BeginExchange();
    const http::request<http::string_body>& request() const { return parser_->get(); }

    AsyncStream stream_;
    Shared& shared_;
    Worker& worker_;
    asio::steady_timer timer_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    std::string out_;    // Bytes of the next write; capacity reused across responses.
    bool hold_ = false;  // a whole stream is kept for one write (`one_write`)
    std::string held_;
    std::string event_;  // One SSE event before chunk framing.
    Exchange exchange_;  // The provider request being answered.
};

template <class AsyncStream>
asio::awaitable<void> Session<AsyncStream>::Run() {
    if constexpr (kTls) {
        auto& tcp_layer = beast::get_lowest_layer(stream_);
        tcp_layer.expires_after(kTlsHandshakeTimeout);
        auto [ec] = co_await stream_.async_handshake(ssl::stream_base::server, kAsTuple);
        if (ec) co_return;
        tcp_layer.expires_never();
    }
    for (;;) {
        parser_.emplace();
        parser_->body_limit(kBodyLimit);
        parser_->header_limit(kHeaderLimit);
        auto [ec, bytes] = co_await http::async_read_header(stream_, buffer_, *parser_, kAsTuple);
        if (ec) break;
        const auto expect = HeaderValue(request(), "expect");
        if (expect && beast::iequals(*expect, "100-continue")) {
            out_.assign("HTTP/1.1 100 Continue\r\n\r\n");
            const bool written = co_await Write();
            if (!written) co_return;
        }
        if (!parser_->is_done()) {
            auto [body_ec, body_bytes] =
                co_await http::async_read(stream_, buffer_, *parser_, kAsTuple);
            if (body_ec == http::error::body_limit) {
                if (IsMessagesPath(PathOf(request().target()))) {
                    BeginExchange();
                    exchange_.keep_alive = false;
                    co_await ReplyProvider(413, ProviderErrorBody(413, std::nullopt), nullptr);
                } else {
                    co_await ReplyPlain(413, openai::ErrorBody(413, std::nullopt, {}), false);
                }
                break;
            }
            if (body_ec) break;
        }
        const After after = co_await Dispatch();
        if (after == After::kGone) co_return;
        if (after == After::kClose) break;
    }
    co_await CloseGracefully();
}

template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::Dispatch() {
    const std::string_view path = PathOf(request().target());
    if (path.starts_with("/mock/")) co_return co_await HandleAdmin();
    if (ApiOf(path) && request().method() == http::verb::post) co_return co_await HandleProvider();
    BeginExchange();
    if (exchange_.anthropic) {
        Record(405, {});
        co_return co_await ReplyProvider(
            405,
            anthropic::InvalidMethodBody(request().method_string(), path, exchange_.request_id),
            nullptr);
    }
    const int status = ApiOf(path) ? 405 : 404;
    std::string body = status == 405 ? openai::InvalidMethodBody(request().method_string(), path)
                                     : openai::InvalidUrlBody(request().method_string(), path);
    Record(status, {});
    co_return co_await ReplyProvider(status, std::move(body), nullptr);
}

template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::HandleAdmin() {
    const std::string_view path = PathOf(request().target());
    const http::verb method = request().method();
    const bool keep_alive = request().keep_alive();
    const std::string ok = R"({"ok":true})";
    std::string_view allow;
    if (path == "/mock/stats") {
        if (method == http::verb::get) {
            co_return co_await ReplyPlain(200, shared_.stats.ToJson(), keep_alive);
        }
        allow = "GET";
    } else if (path == "/mock/reset") {
        if (method == http::verb::post) {
            shared_.stats.Reset();
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        allow = "POST";
    } else if (path == "/mock/limits") {
        if (method == http::verb::get) {
            co_return co_await ReplyPlain(
                200, shared_.rate_limits.ToJson(std::chrono::steady_clock::now()), keep_alive);
        }
        if (method == http::verb::post) {
            const ParsedRateLimits parsed = ParseRateLimitJson(request().body());
            if (!parsed.ok()) {
                co_return co_await ReplyPlain(
                    400, MockError(fmt::format("limits: {}", parsed.error)), keep_alive);
            }
            shared_.rate_limits.Configure(parsed.config, std::chrono::steady_clock::now());
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        if (method == http::verb::delete_) {
            shared_.rate_limits.Configure({}, std::chrono::steady_clock::now());
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        allow = "GET, POST, DELETE";
    } else if (path == "/mock/scenario") {
        if (method == http::verb::post) {
            ParsedScenario parsed = ParseScenario(request().body());
            if (!parsed.ok()) {
                co_return co_await ReplyPlain(400, MockError(parsed.error), keep_alive);
            }
            shared_.scenarios.Set(std::move(parsed.scenario));
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        if (method == http::verb::delete_) {
            shared_.scenarios.Set(nullptr);
            co_return co_await ReplyPlain(200, ok, keep_alive);
        }
        allow = "POST, DELETE";
    } else {
        co_return co_await ReplyPlain(404, MockError(fmt::format("unknown mock endpoint {}", path)),
                                      keep_alive);
    }
    co_return co_await ReplyPlain(
        405, MockError(fmt::format("{} is not allowed on {}", request().method_string(), path)),
        keep_alive, allow);
}

// The provider API of a request, as exchange_.api says: OpenAI's chat completions, embeddings or
// responses, or Anthropic's messages. Order of checks: the fault header's syntax (a test bug, so
// it is reported first), the API key, the body, the rate limits, then the fault itself. Faults
// therefore only hit requests a provider would accept.
template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::HandleProvider() {
    BeginExchange();
    const bool anthropic = exchange_.anthropic;
    const auto has_named_error = [anthropic](NamedError error) {
        return anthropic ? anthropic::HasNamedError(error) : openai::HasNamedError(error);
    };
    const auto unavailable_error = [&](NamedError error) {
        return fmt::format("error={} is not available on {}", NamedErrorName(error),
                           anthropic ? "the Anthropic API" : "the OpenAI API");
    };

    const auto fault_header = HeaderValue(request(), "x-mock-fault");
    ParsedFaultSpec header_fault;
    if (fault_header) {
        header_fault = ParseFaultSpec(*fault_header);
        if (header_fault.ok() && header_fault.spec.error &&
            !has_named_error(*header_fault.spec.error)) {
            header_fault.error = unavailable_error(*header_fault.spec.error);
        }
        if (!header_fault.ok()) {
            Record(400, *fault_header);
            co_return co_await ReplyProvider(
                400, ProviderMockError(fmt::format("x-mock-fault: {}", header_fault.error)),
                nullptr);
        }
    }

    // Parsed before the key check only so that stats name the model of rejected requests too.
    // Each API's request; `parse_status` and `parse_error` say whether the body passed its checks,
    // `cost` is what the rate limiter charges for it.
    openai::ParsedChatRequest parsed;
    anthropic::ParsedMessagesRequest message;
    embeddings::ParsedEmbeddingsRequest embedding;
    responses::ParsedResponsesRequest response;
    int parse_status = 0;
    std::string parse_error;
    RateLimitCost cost;
    switch (exchange_.api) {
        case Api::kMessages:
            message = anthropic::ParseMessagesRequest(request().body(), exchange_.request_id);
            exchange_.model = message.request.model;
            exchange_.output_schema = message.request.output_schema;
            exchange_.prompt_tokens = message.request.input_tokens;
            parse_status = message.status;
            parse_error = std::move(message.error_body);
            cost.input_tokens = exchange_.prompt_tokens;
            break;
        case Api::kEmbeddings:
            embedding = embeddings::ParseEmbeddingsRequest(request().body());
            exchange_.model = embedding.request.model;
            exchange_.prompt_tokens = embedding.request.prompt_tokens;
            parse_status = embedding.status;
            parse_error = std::move(embedding.error_body);
            cost.input_tokens =
                EstimateInputTokens(embedding.request.text_chars) + embedding.request.token_count;
            break;
        case Api::kResponses:
            response = responses::ParseResponsesRequest(request().body());
            exchange_.model = response.request.model;
            exchange_.prompt_tokens = response.request.input_tokens;
            parse_status = response.status;
            parse_error = std::move(response.error_body);
            cost.input_tokens = EstimateInputTokens(response.request.input_chars);
            cost.max_tokens = response.request.max_output_tokens;
            break;
        case Api::kChat:
            parsed = openai::ParseChatRequest(request().body());
            exchange_.model = parsed.request.model;
            exchange_.output_schema = parsed.request.output_schema;
            exchange_.prompt_tokens = parsed.request.prompt_tokens;
            parse_status = parsed.status;
            parse_error = std::move(parsed.error_body);
            cost.input_tokens = EstimateInputTokens(parsed.request.content_chars);
            cost.max_tokens = parsed.request.max_tokens;
            break;
    }

    if (const auto& key = shared_.options.require_key) {
        const auto authorization = HeaderValue(request(), "authorization");
        const bool bearer_ok = authorization && authorization->starts_with("Bearer ") &&
                               authorization->substr(7) == *key;
        // Anthropic's clients send x-api-key; a bearer token is accepted there too.
        const auto api_key = anthropic ? HeaderValue(request(), "x-api-key") : std::nullopt;
        if (!bearer_ok && !(api_key && *api_key == *key)) {
            Record(401, {});
            // A named variable: GCC destroys conditional-operator temporaries in a co_await
            // argument twice.
            std::string body = anthropic ? anthropic::InvalidApiKeyBody(exchange_.request_id)
                                         : openai::InvalidApiKeyBody();
            co_return co_await ReplyProvider(401, std::move(body), nullptr);
        }
    }
    if (parse_status != 0) {
        Record(parse_status, {});
        co_return co_await ReplyProvider(parse_status, std::move(parse_error), nullptr);
    }

    // Rate limits apply to every request a provider would accept, before any fault. The OpenAI
    // APIs share OpenAI's buckets.
    const RateLimitApi api = anthropic ? RateLimitApi::kAnthropic : RateLimitApi::kOpenAi;
    const RateLimitDecision decision = shared_.rate_limits.Admit(api, cost, exchange_.start);
    if (decision.reason) {
        exchange_.rate_limit_retry_after = decision.retry_after;
        Record(429, {}, RateLimitReasonName(*decision.reason));
        std::string body = anthropic ? anthropic::RateLimitBody(*decision.reason, decision.limit,
                                                                exchange_.request_id)
                                     : openai::RateLimitBody(*decision.reason, decision.limit);
        co_return co_await ReplyProvider(429, std::move(body), nullptr);
    }

    // The header overrides the scenario, even when empty. The scenario snapshot keeps the rule
    // alive until this request is answered.
    const FaultSpec* fault = nullptr;
    std::string_view fault_text;
    std::shared_ptr<const Scenario> scenario;
    if (fault_header) {
        fault = &header_fault.spec;
        fault_text = *fault_header;
    } else {
        scenario = shared_.scenarios.Get();
        const ScenarioRule* rule =
            scenario ? scenario->Match(exchange_.model, exchange_.path) : nullptr;
        if (rule != nullptr) {
            fault = &rule->fault;
            fault_text = rule->fault_text;
            if (fault->error && !has_named_error(*fault->error)) {
                Record(400, fault_text);
                co_return co_await ReplyProvider(
                    400,
                    ProviderMockError(
                        fmt::format("scenario fault: {}", unavailable_error(*fault->error))),
                    nullptr);
            }
        }
    }
    if (fault != nullptr && fault->probability < 1.0 && !worker_.Roll(fault->probability)) {
        fault = nullptr;
        fault_text = {};
    }

    const std::optional<int> error_status = fault ? fault->ErrorStatus() : std::nullopt;
    const bool silent = fault != nullptr && (fault->stall || fault->reset);
    Record(silent ? 0 : error_status.value_or(200), fault_text);

    if (fault != nullptr) {
        if (fault->delay_headers.count() > 0) co_await Sleep(fault->delay_headers);
        if (fault->reset) {
            Reset();
            co_return After::kGone;
        }
        if (fault->stall) {
            co_await WaitForPeerClose();
            co_return After::kGone;
        }
        if (fault->close) exchange_.keep_alive = false;
    }
    if (error_status) {
        co_return co_await ReplyProvider(*error_status,
                                         ProviderErrorBody(*error_status, fault->error), fault);
    }
    if (anthropic) {
        const After after = co_await AnswerMessages(message.request, fault);
        // Anthropic's OTPM counts the output tokens actually generated
        // (docs/resilience.md#provider-limits).
        shared_.rate_limits.TakeOutputTokens(exchange_.output_tokens,
                                             std::chrono::steady_clock::now());
        co_return after;
    }
    if (exchange_.api == Api::kEmbeddings) {
        std::string body;
        embeddings::AppendEmbeddingList(body, embedding.request);
        co_return co_await ReplyProvider(200, std::move(body), fault);
    }
    if (exchange_.api == Api::kResponses)
        co_return co_await AnswerResponses(response.request, fault);
    if (parsed.request.stream) {
        co_return co_await SendStream(parsed.request.include_usage, fault);
    }

    const std::string structured = StructuredText(fault);
    const openai::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt,
                                  structured);
    const std::string completion_id = "chatcmpl-" + exchange_.request_id.substr(4, 24);
    const openai::CompletionIdentity identity{
        completion_id, std::chrono::system_clock::to_time_t(exchange_.arrival), exchange_.model};
    std::string body;
    openai::AppendCompletion(body, identity, reply, {exchange_.prompt_tokens, reply.WordCount()});
    co_return co_await ReplyProvider(200, std::move(body), fault);
}

template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::SendStream(bool include_usage,
                                                        const FaultSpec* fault) {
    const std::string structured = StructuredText(fault);
    const openai::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt,
                                  structured);
    const std::string completion_id = "chatcmpl-" + exchange_.request_id.substr(4, 24);
    const openai::ChunkEvents events(
        {completion_id, std::chrono::system_clock::to_time_t(exchange_.arrival), exchange_.model},
        include_usage);
    const milliseconds first_delay = fault ? fault->delay_first_chunk : milliseconds(0);
    const milliseconds gap = fault ? fault->delay_chunks : milliseconds(0);
    const int words = reply.WordCount();
    // Index of the word chunk before which the stream is cut short; past the end when it is not.
    const std::optional<int> cut_after = fault ? fault->CutAfterChunks() : std::nullopt;
    const int cut = cut_after ? std::min(words, *cut_after) : words + 1;

    out_.clear();
    hold_ = fault != nullptr && fault->one_write;
    held_.clear();
    AppendProviderHead(200, kEventStream, std::nullopt, fault);
    bool ok = co_await Emit(false);
    if (!ok) co_return After::kGone;

    event_.clear();
    events.AppendRole(event_);
    ok = co_await SendEvent(first_delay, false);
    for (int i = 0; ok; ++i) {
        if (i == cut) {
            if (fault->reset_after_chunks) {
                co_await Sleep(gap);
                Reset();
                co_return After::kGone;
            }
            if (fault->stall_after_chunks) {
                co_await WaitForPeerClose();
                co_return After::kGone;
            }
            if (fault->end_after_chunks) {
                ok = co_await SendEnd(gap);
                break;
            }
            const int status = fault->error ? NamedErrorStatus(*fault->error) : 500;
            event_.clear();
            openai::ChunkEvents::AppendError(
                event_, openai::ErrorBody(status, fault->error, exchange_.model));
            ok = co_await SendEvent(gap, true);
            break;
        }
        if (i == words) {
            event_.clear();
            events.AppendFinish(event_);
            ok = co_await SendEvent(gap, false);
            if (ok && events.include_usage()) {
                event_.clear();
                events.AppendUsage(event_, {exchange_.prompt_tokens, words});
                ok = co_await SendEvent(gap, false);
            }
            if (ok) {
                event_.clear();
                openai::ChunkEvents::AppendDone(event_);
                ok = co_await SendEvent(gap, true);
            }
            break;
        }
        event_.clear();
        events.AppendWord(event_, reply, i);
        ok = co_await SendEvent(gap, false);
    }
    if (!ok) co_return After::kGone;
    co_return exchange_.keep_alive ? After::kKeepAlive : After::kClose;
}

template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::AnswerMessages(
    const anthropic::MessagesRequest& message, const FaultSpec* fault) {
    if (message.stream) co_return co_await SendMessagesStream(message, fault);
    const std::string message_id = "msg_" + exchange_.request_id.substr(4, 24);
    const anthropic::MessageIdentity identity{message_id, exchange_.model};
    std::string body;
    if (fault != nullptr && fault->tool_use && !message.tool_name.empty()) {
        const std::string tool_id = "toolu_" + exchange_.request_id.substr(12, 24);
        anthropic::AppendToolUseMessage(body, identity, {tool_id, message.tool_name},
                                        {exchange_.prompt_tokens, anthropic::kToolUseOutputTokens});
        exchange_.output_tokens = anthropic::kToolUseOutputTokens;
    } else {
        const std::string structured = StructuredText(fault);
        const anthropic::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt,
                                         structured);
        anthropic::AppendMessage(body, identity, reply,
                                 {exchange_.prompt_tokens, reply.WordCount()});
        exchange_.output_tokens = reply.WordCount();
    }
    co_return co_await ReplyProvider(200, std::move(body), fault);
}

// Anthropic's event sequence (docs/providers.md#streams). "Chunks" of the *_after_chunks keys are
// the content_block_delta events: the words, or the tool input fragments.
template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::SendMessagesStream(
    const anthropic::MessagesRequest& message, const FaultSpec* fault) {
    const std::string structured = StructuredText(fault);
    const anthropic::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt,
                                     structured);
    const std::string message_id = "msg_" + exchange_.request_id.substr(4, 24);
    const std::string tool_id = "toolu_" + exchange_.request_id.substr(12, 24);
    const anthropic::MessageIdentity identity{message_id, exchange_.model};
    const anthropic::ToolUse tool{tool_id, message.tool_name};
    const bool tool_use = fault != nullptr && fault->tool_use && !message.tool_name.empty();
    const milliseconds first_delay = fault ? fault->delay_first_chunk : milliseconds(0);
    const milliseconds gap = fault ? fault->delay_chunks : milliseconds(0);
    const int deltas = tool_use ? anthropic::kToolUseOutputTokens : reply.WordCount();
    const std::optional<int> cut_after = fault ? fault->CutAfterChunks() : std::nullopt;
    const int cut = cut_after ? std::min(deltas, *cut_after) : deltas + 1;

    out_.clear();
    hold_ = fault != nullptr && fault->one_write;
    held_.clear();
    AppendProviderHead(200, kEventStream, std::nullopt, fault);
    bool ok = co_await Emit(false);
    if (!ok) co_return After::kGone;

    event_.clear();
    anthropic::AppendMessageStart(event_, identity, exchange_.prompt_tokens);
    ok = co_await SendEvent(first_delay, false);
    if (ok) {
        event_.clear();
        if (tool_use) {
            anthropic::AppendToolUseBlockStart(event_, tool);
        } else {
            anthropic::AppendTextBlockStart(event_);
        }
        ok = co_await SendEvent(gap, false);
    }
    if (ok) {
        event_.clear();
        anthropic::AppendPing(event_);
        ok = co_await SendEvent(gap, false);
    }
    for (int i = 0; ok; ++i) {
        if (i == cut) {
            if (fault->reset_after_chunks) {
                co_await Sleep(gap);
                Reset();
                co_return After::kGone;
            }
            if (fault->stall_after_chunks) {
                co_await WaitForPeerClose();
                co_return After::kGone;
            }
            if (fault->end_after_chunks) {
                ok = co_await SendEnd(gap);
                break;
            }
            // In-stream errors carry no request_id; without error= it is the overload error.
            const int status = fault->error ? NamedErrorStatus(*fault->error) : 529;
            event_.clear();
            anthropic::AppendErrorEvent(
                event_, anthropic::ErrorBody(status, fault->error, exchange_.model, {}));
            ok = co_await SendEvent(gap, true);
            break;
        }
        if (i == deltas) {
            event_.clear();
            anthropic::AppendBlockStop(event_);
            ok = co_await SendEvent(gap, false);
            if (ok) {
                event_.clear();
                anthropic::AppendMessageDelta(event_, tool_use ? "tool_use" : "end_turn", deltas);
                ok = co_await SendEvent(gap, false);
            }
            if (ok) {
                event_.clear();
                anthropic::AppendMessageStop(event_);
                ok = co_await SendEvent(gap, true);
            }
            break;
        }
        event_.clear();
        if (tool_use) {
            anthropic::AppendInputJsonDelta(event_, anthropic::kToolInputFragments[i]);
        } else {
            anthropic::AppendTextDelta(event_, reply, i);
        }
        ok = co_await SendEvent(gap, false);
        if (ok) exchange_.output_tokens = i + 1;
    }
    if (!ok) co_return After::kGone;
    co_return exchange_.keep_alive ? After::kKeepAlive : After::kClose;
}

template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::AnswerResponses(
    const responses::ResponsesRequest& request, const FaultSpec* fault) {
    const responses::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt);
    const std::string response_id = "resp_" + exchange_.request_id.substr(4);
    std::string message_id = "msg_";
    worker_.AppendId(message_id);
    responses::Response response;
    response.id = response_id;
    response.created_at = std::chrono::system_clock::to_time_t(exchange_.arrival);
    response.model = exchange_.model;
    response.echo = &request.echo;
    response.input_tokens = exchange_.prompt_tokens;
    response.message_id = message_id;
    response.reply = &reply;
    std::string item_id = "fc_";
    std::string call_id = "call_";
    if (fault != nullptr && fault->tool_use && !request.tool_name.empty()) {
        worker_.AppendId(item_id);
        worker_.AppendId(call_id);
        call_id.resize(5 + 24);
        response.call = responses::FunctionCall{item_id, call_id, request.tool_name};
    }
    if (request.stream) co_return co_await SendResponsesStream(response, fault);
    std::string body;
    responses::AppendResponse(body, response);
    co_return co_await ReplyProvider(200, std::move(body), fault);
}

// The Responses API's event sequence (responses_wire.h). "Chunks" of the *_after_chunks keys are
// the delta events: response.output_text.delta per word, or the function call's argument deltas.
template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::SendResponsesStream(
    const responses::Response& response, const FaultSpec* fault) {
    responses::ResponseEvents events(response);
    const milliseconds first_delay = fault ? fault->delay_first_chunk : milliseconds(0);
    const milliseconds gap = fault ? fault->delay_chunks : milliseconds(0);
    const int deltas = events.DeltaCount();
    const std::optional<int> cut_after = fault ? fault->CutAfterChunks() : std::nullopt;
    const int cut = cut_after ? std::min(deltas, *cut_after) : deltas + 1;

    out_.clear();
    hold_ = fault != nullptr && fault->one_write;
    held_.clear();
    AppendProviderHead(200, kEventStream, std::nullopt, fault);
    bool ok = co_await Emit(false);
    if (!ok) co_return After::kGone;

    for (int step = 0; ok && step < events.OpeningCount(); ++step) {
        event_.clear();
        events.AppendOpening(event_, step);
        ok = co_await SendEvent(step == 0 ? first_delay : gap, false);
    }
    for (int i = 0; ok; ++i) {
        if (i == cut) {
            if (fault->reset_after_chunks) {
                co_await Sleep(gap);
                Reset();
                co_return After::kGone;
            }
            if (fault->stall_after_chunks) {
                co_await WaitForPeerClose();
                co_return After::kGone;
            }
            if (fault->end_after_chunks) {
                ok = co_await SendEnd(gap);
                break;
            }
            // The named error's code and message, by default server_error's.
            const int status = fault->error ? NamedErrorStatus(*fault->error) : 500;
            const responses::StreamError error =
                responses::StreamErrorOf(openai::ErrorBody(status, fault->error, exchange_.model));
            event_.clear();
            events.AppendError(event_, error.code, error.message);
            ok = co_await SendEvent(gap, true);
            break;
        }
        if (i == deltas) {
            const int closing = events.ClosingCount();
            for (int step = 0; ok && step < closing; ++step) {
                event_.clear();
                events.AppendClosing(event_, step);
                ok = co_await SendEvent(gap, step + 1 == closing);
            }
            break;
        }
        event_.clear();
        events.AppendDelta(event_, i);
        ok = co_await SendEvent(gap, false);
    }
    if (!ok) co_return After::kGone;
    co_return exchange_.keep_alive ? After::kKeepAlive : After::kClose;
}

// Frames event_ as one HTTP chunk (plus the last-chunk marker when `last`) and writes it alone,
// after `delay`, so that delays between events are visible on the wire.
template <class AsyncStream>
asio::awaitable<bool> Session<AsyncStream>::SendEvent(milliseconds delay, bool last) {
    if (delay.count() > 0) co_await Sleep(delay);
    out_.clear();
    fmt::format_to(std::back_inserter(out_), "{:x}\r\n", event_.size());
    out_ += event_;
    out_ += last ? "\r\n0\r\n\r\n" : "\r\n";
    co_return co_await Emit(last);
}

// The terminating zero-length chunk alone: a clean end where the stream's end event should be.
template <class AsyncStream>
asio::awaitable<bool> Session<AsyncStream>::SendEnd(milliseconds delay) {
    if (delay.count() > 0) co_await Sleep(delay);
    out_ = "0\r\n\r\n";
    co_return co_await Emit(true);
}

// One write of a stream's next bytes — or, while a whole stream is held (`one_write`), kept for
// one write at its end.
template <class AsyncStream>
asio::awaitable<bool> Session<AsyncStream>::Emit(bool last) {
    if (!hold_) co_return co_await Write();
    held_ += out_;
    if (!last) co_return true;
    hold_ = false;
    out_.swap(held_);
    held_.clear();
    co_return co_await Write();
}

template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::ReplyProvider(int status, std::string body,
                                                           const FaultSpec* fault) {
    if (fault != nullptr && fault->truncate_body &&
        body.size() > static_cast<std::size_t>(*fault->truncate_body)) {
        body.resize(static_cast<std::size_t>(*fault->truncate_body));
    }
    out_.clear();
    AppendProviderHead(status, kJson, body.size(), fault);
    out_ += body;
    const bool ok = co_await Write();
    if (!ok) co_return After::kGone;
    co_return exchange_.keep_alive ? After::kKeepAlive : After::kClose;
}

template <class AsyncStream>
asio::awaitable<After> Session<AsyncStream>::ReplyPlain(int status, std::string body,
                                                        bool keep_alive, std::string_view allow) {
    out_.clear();
    AppendHeadStart(out_, status, kJson, body.size(), keep_alive);
    if (!allow.empty()) fmt::format_to(std::back_inserter(out_), "Allow: {}\r\n", allow);
    out_ += "\r\n";
    out_ += body;
    const bool ok = co_await Write();
    if (!ok) co_return After::kGone;
    co_return keep_alive ? After::kKeepAlive : After::kClose;
}

template <class AsyncStream>
void Session<AsyncStream>::AppendProviderHead(int status, std::string_view content_type,
                                              std::optional<std::size_t> content_length,
                                              const FaultSpec* fault) {
    AppendHeadStart(out_, status, content_type, content_length, exchange_.keep_alive);
    if (status == 405) out_ += "Allow: POST\r\n";  // RFC 9110 15.5.6; chat is POST only.
    // Rate-limit headers describe the buckets as this head leaves, after this request's charge.
    const auto now = std::chrono::steady_clock::now();
    if (exchange_.anthropic) {
        fmt::format_to(std::back_inserter(out_), "request-id: {}\r\n", exchange_.request_id);
        AppendAnthropicRateLimitHeaders(
            out_, shared_.rate_limits.AnthropicSnapshot(exchange_.prompt_tokens, now,
                                                        std::chrono::system_clock::now()));
        if (exchange_.rate_limit_retry_after) {
            AppendRetryAfterHeaders(out_, RateLimitApi::kAnthropic,
                                    *exchange_.rate_limit_retry_after);
        }
        if (fault != nullptr) {
            if (anthropic::SuppressesRetryAfter(*fault)) {
                FaultSpec headers = *fault;
                headers.retry_after_s.reset();
                headers.retry_after_date_s.reset();
                headers.retry_after_ms.reset();
                AppendFaultHeaders(out_, headers, exchange_.arrival);
            } else {
                AppendFaultHeaders(out_, *fault, exchange_.arrival);
            }
        }
        out_ += "\r\n";
        return;
    }
    const auto elapsed = std::chrono::duration_cast<milliseconds>(now - exchange_.start);
    fmt::format_to(std::back_inserter(out_), "x-request-id: {}\r\nopenai-processing-ms: {}\r\n",
                   exchange_.request_id, elapsed.count());
    AppendRateLimitHeaders(out_, shared_.rate_limits.Snapshot(exchange_.prompt_tokens, now));
    if (exchange_.rate_limit_retry_after) {
        AppendRetryAfterHeaders(out_, RateLimitApi::kOpenAi, *exchange_.rate_limit_retry_after);
    }
    if (fault != nullptr) AppendFaultHeaders(out_, *fault, exchange_.arrival);
    out_ += "\r\n";
}

template <class AsyncStream>
void Session<AsyncStream>::BeginExchange() {
    Exchange& exchange = exchange_;
    exchange.arrival = std::chrono::system_clock::now();
    exchange.start = std::chrono::steady_clock::now();
    exchange.request_id.assign("req_");
    worker_.AppendId(exchange.request_id);
    exchange.path = PathOf(request().target());
    exchange.keep_alive = request().keep_alive();
    exchange.api = ApiOf(exchange.path).value_or(Api::kChat);
    exchange.anthropic = exchange.api == Api::kMessages;
    exchange.model.clear();
    exchange.prompt_tokens = 1;
    exchange.output_tokens = 0;
    exchange.rate_limit_retry_after.reset();
}

template <class AsyncStream>
void Session<AsyncStream>::Record(int status, std::string_view fault_text,
                                  std::string_view rate_limit) {
    const Exchange& exchange = exchange_;
    RequestObservation observation;
    observation.path = exchange.path;
    observation.model = exchange.model;
    observation.t_ms = MillisSinceEpoch(exchange.arrival);
    observation.status = status;
    observation.fault = fault_text;
    observation.rate_limit = rate_limit;
    observation.authorization = HeaderValue(request(), "authorization");
    observation.retry_count = HeaderValue(request(), "x-stainless-retry-count");
    observation.user_agent = HeaderValue(request(), "user-agent");
    observation.content_type = HeaderValue(request(), "content-type");
    observation.traceparent = HeaderValue(request(), "traceparent");
    observation.body = request().body();
    shared_.stats.Record(observation);
}

template <class AsyncStream>
std::string Session<AsyncStream>::ProviderMockError(std::string_view message) const {
    if (exchange_.anthropic) {
        return anthropic::ErrorEnvelope("mock_error", message, exchange_.request_id);
    }
    return MockError(message);
}

template <class AsyncStream>
std::string Session<AsyncStream>::ProviderErrorBody(int status,
                                                    std::optional<NamedError> error) const {
    if (exchange_.anthropic) {
        return anthropic::ErrorBody(status, error, exchange_.model, exchange_.request_id);
    }
    return openai::ErrorBody(status, error, exchange_.model);
}

template <class AsyncStream>
asio::awaitable<bool> Session<AsyncStream>::Write() {
    auto [ec, bytes] = co_await asio::async_write(stream_, asio::buffer(out_), kAsTuple);
    co_return !ec;
}

template <class AsyncStream>
asio::awaitable<void> Session<AsyncStream>::Sleep(milliseconds duration) {
    timer_.expires_after(duration);
    co_await timer_.async_wait(kAsTuple);
}

// Reads and discards until the peer closes or the server stops: a stalled response keeps the
// connection open without sending anything.
template <class AsyncStream>
asio::awaitable<void> Session<AsyncStream>::WaitForPeerClose() {
    for (;;) {
        auto [ec, bytes] = co_await stream_.async_read_some(buffer_.prepare(4096), kAsTuple);
        if (ec) co_return;
    }
}

template <class AsyncStream>
asio::awaitable<void> Session<AsyncStream>::CloseGracefully() {
    auto& tcp_layer = beast::get_lowest_layer(stream_);
    if constexpr (kTls) {
        tcp_layer.expires_after(kTlsShutdownTimeout);
        co_await stream_.async_shutdown(kAsTuple);
    }
    boost::system::error_code ignored;
    tcp_layer.socket().shutdown(tcp::socket::shutdown_send, ignored);
    tcp_layer.socket().close(ignored);
}

// Aborts the connection with a TCP RST: a zero linger time makes close() discard unsent data and
// reset instead of sending FIN.
template <class AsyncStream>
void Session<AsyncStream>::Reset() {
    auto& socket = beast::get_lowest_layer(stream_).socket();
    boost::system::error_code ignored;
    socket.set_option(asio::socket_base::linger(true, 0), ignored);
    socket.close(ignored);
}

template <class AsyncStream>
asio::awaitable<void> RunSession(tcp::socket socket, Shared* shared, Worker* worker) {
    if constexpr (std::is_same_v<AsyncStream, TlsStream>) {
        Session<TlsStream> session(TlsStream(beast::tcp_stream(std::move(socket)), *shared->tls),
                                   *shared, *worker);
        co_await session.Run();
    } else {
        Session<PlainStream> session(PlainStream(std::move(socket)), *shared, *worker);
        co_await session.Run();
    }
}

}  // namespace

struct Server::Impl final {
    Shared shared;
    std::vector<std::unique_ptr<Worker>> workers;
    std::optional<tcp::acceptor> acceptor;  // Declared after workers: closed before they go.

    asio::awaitable<void> AcceptLoop();
};

asio::awaitable<void> Server::Impl::AcceptLoop() {
    std::size_t next = 0;
    asio::steady_timer backoff(acceptor->get_executor());
    for (;;) {
        Worker& worker = *workers[next];
        next = (next + 1) % workers.size();
        auto [ec, socket] = co_await acceptor->async_accept(worker.io(), kAsTuple);
        if (ec == asio::error::operation_aborted) co_return;
        if (ec) {
            // Typically EMFILE: give connections a moment to close instead of spinning.
            backoff.expires_after(milliseconds(10));
            co_await backoff.async_wait(kAsTuple);
            continue;
        }
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        if (shared.tls) {
            asio::co_spawn(worker.io(), RunSession<TlsStream>(std::move(socket), &shared, &worker),
                           asio::detached);
        } else {
            asio::co_spawn(worker.io(),
                           RunSession<PlainStream>(std::move(socket), &shared, &worker),
                           asio::detached);
        }
    }
}

Server::Server(ServerOptions options, std::shared_ptr<const Scenario> scenario)
    : impl_(std::make_unique<Impl>()) {
    Shared& shared = impl_->shared;
    shared.options = std::move(options);
    shared.scenarios.Set(std::move(scenario));
    shared.rate_limits.Configure(shared.options.limits, std::chrono::steady_clock::now());
    if (!shared.options.tls_cert.empty()) {
        auto& tls = shared.tls.emplace(ssl::context::tls_server);
        tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                        ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                        ssl::context::single_dh_use);
        boost::system::error_code ec;
        tls.use_certificate_chain_file(shared.options.tls_cert, ec);
        if (ec) {
            throw std::runtime_error(
                fmt::format("cannot load {}: {}", shared.options.tls_cert, ec.message()));
        }
        tls.use_private_key_file(shared.options.tls_key, ssl::context::pem, ec);
        if (ec) {
            throw std::runtime_error(
                fmt::format("cannot load {}: {}", shared.options.tls_key, ec.message()));
        }
    }
    std::random_device entropy;
    const std::uint64_t seed =
        shared.options.seed.value_or((static_cast<std::uint64_t>(entropy()) << 32) | entropy());
    const int threads = std::max(1, shared.options.threads);
    for (int i = 0; i < threads; ++i) {
        const std::uint64_t id_seed = (static_cast<std::uint64_t>(entropy()) << 32) | entropy();
        impl_->workers.push_back(std::make_unique<Worker>(seed + i, id_seed));
    }
}

Server::~Server() = default;

std::string Server::Bind() {
    auto& io = impl_->workers.front()->io();
    tcp::resolver resolver(io);
    boost::system::error_code ec;
    const auto results =
        resolver.resolve(impl_->shared.options.host, std::to_string(impl_->shared.options.port),
                         tcp::resolver::numeric_service, ec);
    if (ec || results.empty()) {
        throw std::runtime_error(fmt::format("cannot resolve {}: {}", impl_->shared.options.host,
                                             ec ? ec.message() : "no address"));
    }
    const tcp::endpoint endpoint = results.begin()->endpoint();
    auto& acceptor = impl_->acceptor.emplace(io);
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
        throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}",
                                             endpoint.address().to_string(), endpoint.port(),
                                             ec.message()));
    }
    const tcp::endpoint bound = acceptor.local_endpoint();
    const auto address = bound.address();
    return address.is_v6() ? fmt::format("[{}]:{}", address.to_string(), bound.port())
                           : fmt::format("{}:{}", address.to_string(), bound.port());
}

void Server::Run() {
    auto& workers = impl_->workers;
    asio::io_context& main_io = workers.front()->io();
    asio::co_spawn(main_io, impl_->AcceptLoop(), asio::detached);

    const auto stop_all = [&workers] {
        for (auto& worker : workers) worker->io().stop();
    };
    asio::signal_set signals(main_io, SIGINT, SIGTERM);
    signals.async_wait([&stop_all](const boost::system::error_code& ec, int) {
        if (!ec) stop_all();
    });

    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
    std::vector<std::thread> threads;
    for (std::size_t i = 1; i < workers.size(); ++i) {
        guards.push_back(asio::make_work_guard(workers[i]->io()));
        threads.emplace_back([&io = workers[i]->io()] { io.run(); });
    }
    main_io.run();
    stop_all();
    for (auto& thread : threads) thread.join();
}

}  // namespace switchyard::mock
