#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "anthropic_wire.h"
#include "batch_wire.h"
#include "embeddings_wire.h"
#include "fault_spec.h"
#include "openai_wire.h"
#include "responses_wire.h"
#include "server_state.h"
#include "stream_script.h"

// Answers the requests of one downstream connection: the provider APIs with their faults, the Batch
// APIs, and the /mock/ endpoints. Knows nothing of sockets or TLS: it writes through a Downstream.
namespace switchyard::mock {

using Request = boost::beast::http::request<boost::beast::http::string_body>;

inline constexpr std::string_view kJson = "application/json";
inline constexpr std::string_view kEventStream = "text/event-stream; charset=utf-8";

// The connection a Responder writes to. The Responder answers one request at a time, so calls
// never overlap.
class Downstream {
  public:
    virtual ~Downstream() = default;

    // Writes all of `bytes`, which stay valid until it completes; false if the connection failed.
    virtual boost::asio::awaitable<bool> Write(std::string_view bytes) = 0;

    // Reads and discards until the peer closes or the server stops: a stalled answer keeps the
    // connection open without sending anything.
    virtual boost::asio::awaitable<void> WaitForPeerClose() = 0;

    // Aborts the connection with a TCP RST.
    virtual void Reset() = 0;
};

// What the connection does once a request is answered.
enum class After {
    kKeepAlive,  // Read the next request.
    kClose,      // Close the connection gracefully.
    kGone,       // The connection was already reset or abandoned.
};

// The provider APIs the mock speaks, by path.
enum class Api {
    kChat,        // OpenAI's chat completions: /v1/chat/completions, /chat/completions
    kMessages,    // Anthropic's messages: /v1/messages
    kEmbeddings,  // OpenAI's embeddings: /v1/embeddings, /embeddings
    kResponses,   // OpenAI's responses: /v1/responses, /responses
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
    std::optional<std::chrono::milliseconds> rate_limit_retry_after;
    bool keep_alive = true;
    Api api = Api::kChat;       // Of a provider path; kChat for any other path (OpenAI's 404).
    bool anthropic = false;     // Anthropic's Messages API (/v1/messages) rather than OpenAI's.
    std::string output_schema;  // the JSON schema the request asks for (empty: none)
    // A batch line rather than a request: its error bodies carry no request_id.
    bool batch_line = false;
};

// A request body that passed the checks of its API: the alternative of exchange_.api.
using ProviderRequest = std::variant<openai::ChatRequest, anthropic::MessagesRequest,
                                     embeddings::EmbeddingsRequest, responses::ResponsesRequest>;

// Answers one connection's requests, one at a time, for as long as the connection lives. Runs on
// the connection's thread only; `shared`, `worker` and `downstream` outlive it.
class Responder final {
  public:
    Responder(Shared& shared, Worker& worker, Downstream& downstream,
              boost::asio::any_io_executor executor);

    // Answers `request` (which stays valid until this completes).
    boost::asio::awaitable<After> Dispatch(const Request& request);

    // The 413 for a request whose body is over the limit; the connection closes after it.
    boost::asio::awaitable<void> ReplyBodyTooLarge(const Request& request);

  private:
    using milliseconds = std::chrono::milliseconds;

    // The ids a Responses API answer refers to.
    struct ResponseIds {
        std::string response;
        std::string message;
        std::string item;
        std::string call;
    };

    // responder.cc: the request checks, fault selection and response heads.
    boost::asio::awaitable<After> HandleAdmin();
    boost::asio::awaitable<After> HandleProvider();
    bool KeyAccepted() const;
    batches::Answer AnswerBatchLine(const batches::Line& line);
    boost::asio::awaitable<After> Serve(const ProviderRequest& request, const FaultSpec* fault,
                                        std::string_view fault_text);
    std::string UnavailableError(const FaultSpec& spec) const;
    boost::asio::awaitable<After> ReplyProvider(int status, std::string body,
                                                const FaultSpec* fault);
    boost::asio::awaitable<After> ReplyPlain(int status, std::string body, bool keep_alive,
                                             std::string_view allow = {});
    // `allow`: the Allow header of a 405.
    void AppendProviderHead(int status, std::string_view content_type,
                            std::optional<std::size_t> content_length, const FaultSpec* fault,
                            std::string_view allow = "POST");
    void Record(int status, std::string_view fault_text, std::string_view rate_limit = {});
    std::string ProviderMockError(std::string_view message) const;
    std::string ProviderErrorBody(int status, std::optional<NamedError> error) const;
    std::string_view ErrorRequestId() const;
    void BeginExchange();
    boost::asio::awaitable<bool> Write();  // Writes out_.
    boost::asio::awaitable<void> Sleep(milliseconds duration);
    // Sleeps `duration` unless the client closes its connection first: false then (counted).
    boost::asio::awaitable<bool> DelayUnlessClosed(milliseconds duration);
    After Continue() const { return exchange_.keep_alive ? After::kKeepAlive : After::kClose; }

    // batch_handlers.cc: the Batch APIs.
    boost::asio::awaitable<After> HandleBatch();

    // answers.cc: the answers of each API and the faults that shape them.
    boost::asio::awaitable<After> Answer(const ProviderRequest& request, const FaultSpec* fault);
    std::pair<int, std::string> WholeAnswer(const ProviderRequest& request, const FaultSpec* fault);
    std::string BodyFaultBody(BodyFault body) const;
    std::string ChatBody(const openai::ChatRequest& request, const FaultSpec* fault);
    std::string MessagesBody(const anthropic::MessagesRequest& request, const FaultSpec* fault);
    std::string ResponsesBody(const responses::ResponsesRequest& request, const FaultSpec* fault);
    void PrepareResponse(const responses::ResponsesRequest& request, const FaultSpec* fault,
                         const responses::ReplyText& reply, ResponseIds& ids,
                         responses::Response& response);
    boost::asio::awaitable<After> AnswerChat(const openai::ChatRequest& request,
                                             const FaultSpec* fault);
    boost::asio::awaitable<After> AnswerMessages(const anthropic::MessagesRequest& request,
                                                 const FaultSpec* fault);
    boost::asio::awaitable<After> AnswerResponses(const responses::ResponsesRequest& request,
                                                  const FaultSpec* fault);
    boost::asio::awaitable<After> SendStream(const StreamScript& script,
                                             openai::ReplyText* paddable, const FaultSpec* fault);
    boost::asio::awaitable<bool> SendEvent(milliseconds delay, bool last);
    boost::asio::awaitable<bool> SendEnd(milliseconds delay);
    boost::asio::awaitable<bool> Emit(bool last);
    boost::asio::awaitable<bool> SendInterim(const FaultSpec& fault);
    boost::asio::awaitable<After> SendLateResponse(milliseconds delay, After after);
    std::string LateResponseBody();
    // The reply to a request that asks for a JSON schema (empty: it asks for none).
    std::string StructuredText(const FaultSpec* fault) const;
    std::string NewId(std::string_view prefix, std::size_t digits);
    void ReleaseLargeBuffers();

    Shared& shared_;
    Worker& worker_;
    Downstream& downstream_;
    boost::asio::steady_timer timer_;
    const Request* request_ = nullptr;  // The request being answered.
    std::string out_;    // Bytes of the next write; capacity reused across responses.
    bool hold_ = false;  // a whole stream is kept for one write (`one_write`)
    std::string held_;
    std::string event_;  // One SSE event before chunk framing.
    Exchange exchange_;  // The provider request being answered.
};

}  // namespace switchyard::mock
