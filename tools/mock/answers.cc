// The answers of each provider API, and the faults that shape an answer once it has been chosen:
// interim responses before it, body= in place of it, event_bytes padding, the one stream loop
// (delays, cuts, one_write) and a late response after it.

#include <fmt/format.h>

#include <boost/json/parse.hpp>
#include <utility>

#include "http_head.h"
#include "responder.h"
#include "structured_output.h"

namespace switchyard::mock {
namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

// Builds a non-streaming body with `build`. When event_bytes asks for a larger body, pads `reply`
// by the difference and builds it again: padding adds exactly its length, as neither fill
// character needs escaping in JSON.
template <class Build>
std::string PaddedBody(openai::ReplyText* reply, const FaultSpec* fault, Build build) {
    std::string body;
    build(body);
    if (reply == nullptr || fault == nullptr || !fault->event_bytes || reply->WordCount() == 0) {
        return body;
    }
    const auto wanted = static_cast<std::size_t>(*fault->event_bytes);
    if (body.size() >= wanted) return body;
    reply->Pad(wanted - body.size());
    std::string padded;
    padded.reserve(wanted);
    build(padded);
    return padded;
}

}  // namespace

// The answer to a request that passed every check, once the fault's head delay is over: its error
// answer, the body= replacement, or the API's answer.
asio::awaitable<After> Responder::Answer(const ProviderRequest& request, const FaultSpec* fault) {
    const std::optional<int> error_status = fault ? fault->ErrorStatus() : std::nullopt;
    if (error_status) {
        co_return co_await ReplyProvider(*error_status,
                                         ProviderErrorBody(*error_status, fault->error), fault);
    }
    if (fault != nullptr && fault->body) {
        // Status 200 and every header of a good answer, a stream asked for or not: only the JSON
        // tells that this is no answer.
        co_return co_await ReplyProvider(200, BodyFaultBody(*fault->body), fault);
    }
    if (const auto* message = std::get_if<anthropic::MessagesRequest>(&request)) {
        const After after = co_await AnswerMessages(*message, fault);
        // Anthropic's OTPM counts the output tokens actually generated
        // (docs/resilience.md#provider-limits).
        shared_.rate_limits.TakeOutputTokens(exchange_.output_tokens,
                                             std::chrono::steady_clock::now());
        co_return after;
    }
    if (const auto* embedding = std::get_if<embeddings::EmbeddingsRequest>(&request)) {
        std::string body;
        embeddings::AppendEmbeddingList(body, *embedding);
        co_return co_await ReplyProvider(200, std::move(body), fault);
    }
    if (const auto* response = std::get_if<responses::ResponsesRequest>(&request)) {
        co_return co_await AnswerResponses(*response, fault);
    }
    co_return co_await AnswerChat(std::get<openai::ChatRequest>(request), fault);
}

// As Answer, but the status and JSON body of the whole answer, as the answer to the request
// without `stream` would be: a batch line's answer.
std::pair<int, std::string> Responder::WholeAnswer(const ProviderRequest& request,
                                                   const FaultSpec* fault) {
    if (const std::optional<int> status = fault ? fault->ErrorStatus() : std::nullopt) {
        return {*status, ProviderErrorBody(*status, fault->error)};
    }
    if (fault != nullptr && fault->body) return {200, BodyFaultBody(*fault->body)};
    if (const auto* message = std::get_if<anthropic::MessagesRequest>(&request)) {
        return {200, MessagesBody(*message, fault)};
    }
    if (const auto* embedding = std::get_if<embeddings::EmbeddingsRequest>(&request)) {
        std::string body;
        embeddings::AppendEmbeddingList(body, *embedding);
        return {200, std::move(body)};
    }
    if (const auto* response = std::get_if<responses::ResponsesRequest>(&request)) {
        return {200, ResponsesBody(*response, fault)};
    }
    return {200, ChatBody(std::get<openai::ChatRequest>(request), fault)};
}

std::string Responder::BodyFaultBody(BodyFault body) const {
    if (body == BodyFault::kError) return ProviderErrorBody(500, std::nullopt);
    return std::string(exchange_.anthropic ? anthropic::kWrongShapeBody : openai::kWrongShapeBody);
}

asio::awaitable<After> Responder::AnswerChat(const openai::ChatRequest& request,
                                             const FaultSpec* fault) {
    if (!request.stream) co_return co_await ReplyProvider(200, ChatBody(request, fault), fault);
    const std::string structured = StructuredText(fault);
    openai::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt, structured);
    const std::string completion_id = "chatcmpl-" + exchange_.request_id.substr(4, 24);
    const openai::CompletionIdentity identity{
        completion_id, std::chrono::system_clock::to_time_t(exchange_.arrival), exchange_.model};
    const ToolCall* call = request.tools.Call(fault != nullptr && fault->tool_use);
    const std::string call_id = call != nullptr ? NewId("call_", 24) : std::string();
    if (call != nullptr) {
        const openai::ChatStream script(identity, request.include_usage, exchange_.prompt_tokens,
                                        call_id, *call);
        co_return co_await SendStream(script, nullptr, fault);
    }
    const openai::ChatStream script(identity, request.include_usage, exchange_.prompt_tokens,
                                    reply);
    co_return co_await SendStream(script, &reply, fault);
}

// The non-streaming chat completion (AnswerChat's streaming answer is built alike).
std::string Responder::ChatBody(const openai::ChatRequest& request, const FaultSpec* fault) {
    const std::string structured = StructuredText(fault);
    openai::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt, structured);
    const std::string completion_id = "chatcmpl-" + exchange_.request_id.substr(4, 24);
    const openai::CompletionIdentity identity{
        completion_id, std::chrono::system_clock::to_time_t(exchange_.arrival), exchange_.model};
    const ToolCall* call = request.tools.Call(fault != nullptr && fault->tool_use);
    if (call != nullptr) {
        const std::string call_id = NewId("call_", 24);
        std::string body;
        openai::AppendToolCallCompletion(body, identity, call_id, *call,
                                         {exchange_.prompt_tokens, openai::ToolCallTokens(*call)});
        return body;
    }
    return PaddedBody(&reply, fault, [&](std::string& out) {
        openai::AppendCompletion(out, identity, reply,
                                 {exchange_.prompt_tokens, reply.WordCount()});
    });
}

asio::awaitable<After> Responder::AnswerMessages(const anthropic::MessagesRequest& request,
                                                 const FaultSpec* fault) {
    if (!request.stream) {
        co_return co_await ReplyProvider(200, MessagesBody(request, fault), fault);
    }
    const std::string message_id = "msg_" + exchange_.request_id.substr(4, 24);
    const anthropic::MessageIdentity identity{message_id, exchange_.model};
    const std::string tool_id = "toolu_" + exchange_.request_id.substr(12, 24);
    const ToolCall* call = request.tools.Call(fault != nullptr && fault->tool_use);
    const std::string structured = StructuredText(fault);
    anthropic::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt, structured);
    if (call != nullptr) {
        const anthropic::MessageStream script(identity, exchange_.prompt_tokens, {tool_id, *call});
        co_return co_await SendStream(script, nullptr, fault);
    }
    const anthropic::MessageStream script(identity, exchange_.prompt_tokens, reply);
    co_return co_await SendStream(script, &reply, fault);
}

// The non-streaming message (AnswerMessages's streaming answer is built alike). Sets the
// exchange's output tokens.
std::string Responder::MessagesBody(const anthropic::MessagesRequest& request,
                                    const FaultSpec* fault) {
    const std::string message_id = "msg_" + exchange_.request_id.substr(4, 24);
    const anthropic::MessageIdentity identity{message_id, exchange_.model};
    const std::string tool_id = "toolu_" + exchange_.request_id.substr(12, 24);
    const ToolCall* call = request.tools.Call(fault != nullptr && fault->tool_use);
    const std::string structured = StructuredText(fault);
    anthropic::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt, structured);
    std::string body;
    if (call != nullptr) {
        exchange_.output_tokens = anthropic::ToolUseOutputTokens(*call);
        anthropic::AppendToolUseMessage(body, identity, {tool_id, *call},
                                        {exchange_.prompt_tokens, exchange_.output_tokens});
        return body;
    }
    exchange_.output_tokens = reply.WordCount();
    return PaddedBody(&reply, fault, [&](std::string& out) {
        anthropic::AppendMessage(out, identity, reply,
                                 {exchange_.prompt_tokens, reply.WordCount()});
    });
}

// Fills `response` for `request`: ids (kept in `ids`), the reply and the function call, if any.
void Responder::PrepareResponse(const responses::ResponsesRequest& request, const FaultSpec* fault,
                                const responses::ReplyText& reply, ResponseIds& ids,
                                responses::Response& response) {
    ids.response = "resp_" + exchange_.request_id.substr(4);
    ids.message = NewId("msg_", 32);
    response.id = ids.response;
    response.created_at = std::chrono::system_clock::to_time_t(exchange_.arrival);
    response.model = exchange_.model;
    response.echo = &request.echo;
    response.input_tokens = exchange_.prompt_tokens;
    response.message_id = ids.message;
    response.reply = &reply;
    if (const ToolCall* call = request.tools.Call(fault != nullptr && fault->tool_use)) {
        ids.item = NewId("fc_", 32);
        ids.call = NewId("call_", 24);
        response.call = responses::FunctionCall{ids.item, ids.call, call->name, call->arguments};
    }
}

asio::awaitable<After> Responder::AnswerResponses(const responses::ResponsesRequest& request,
                                                  const FaultSpec* fault) {
    if (!request.stream) {
        co_return co_await ReplyProvider(200, ResponsesBody(request, fault), fault);
    }
    responses::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt);
    ResponseIds ids;
    responses::Response response;
    PrepareResponse(request, fault, reply, ids, response);
    const responses::ResponseEvents script(response);
    co_return co_await SendStream(script, response.call ? nullptr : &reply, fault);
}

std::string Responder::ResponsesBody(const responses::ResponsesRequest& request,
                                     const FaultSpec* fault) {
    responses::ReplyText reply(exchange_.model, fault ? fault->chunks : std::nullopt);
    ResponseIds ids;
    responses::Response response;
    PrepareResponse(request, fault, reply, ids, response);
    return PaddedBody(response.call ? nullptr : &reply, fault,
                      [&](std::string& out) { responses::AppendResponse(out, response); });
}

// The one stream loop: the head, the script's opening events, its deltas — cut short as the
// fault says — and its closing events. Delays: delay_first_chunk before the first event,
// delay_chunks before every later one. event_bytes pads the first delta of a text answer
// (`paddable`) so that its data: line is at least that long.
asio::awaitable<After> Responder::SendStream(const StreamScript& script,
                                             openai::ReplyText* paddable, const FaultSpec* fault) {
    const milliseconds first_delay = fault ? fault->delay_first_chunk : milliseconds(0);
    const milliseconds gap = fault ? fault->delay_chunks : milliseconds(0);
    const int deltas = script.DeltaCount();
    if (fault != nullptr && fault->event_bytes && paddable != nullptr && deltas > 0) {
        event_.clear();
        script.AppendDelta(event_, 0);
        const std::size_t line = DataLineBytes(event_);
        const auto wanted = static_cast<std::size_t>(*fault->event_bytes);
        if (line < wanted) paddable->Pad(wanted - line);
    }
    // Index of the delta before which the stream is cut short; past the end when it is not.
    const std::optional<int> cut_after = fault ? fault->CutAfterChunks() : std::nullopt;
    const int cut = cut_after ? std::min(deltas, *cut_after) : deltas + 1;

    out_.clear();
    hold_ = fault != nullptr && fault->one_write;
    held_.clear();
    AppendProviderHead(200, kEventStream, std::nullopt, fault);
    bool ok = co_await Emit(false);
    if (!ok) co_return After::kGone;

    for (int step = 0; ok && step < script.OpeningCount(); ++step) {
        event_.clear();
        script.AppendOpening(event_, step);
        ok = co_await SendEvent(step == 0 ? first_delay : gap, false);
    }
    for (int i = 0; ok; ++i) {
        if (i == cut) {
            if (fault->reset_after_chunks) {
                co_await Sleep(gap);
                downstream_.Reset();
                co_return After::kGone;
            }
            if (fault->stall_after_chunks) {
                co_await downstream_.WaitForPeerClose();
                co_return After::kGone;
            }
            if (fault->end_after_chunks) {
                ok = co_await SendEnd(gap);
                break;
            }
            event_.clear();
            if (fault->error_without_data) {
                event_ = "event: error\n\n";
            } else {
                script.AppendError(event_, i, fault->error);
            }
            ok = co_await SendEvent(gap, true);
            break;
        }
        if (i == deltas) {
            const int closing = script.ClosingCount();
            for (int step = 0; ok && step < closing; ++step) {
                event_.clear();
                script.AppendClosing(event_, step);
                ok = co_await SendEvent(gap, step + 1 == closing);
            }
            break;
        }
        event_.clear();
        script.AppendDelta(event_, i);
        ok = co_await SendEvent(gap, false);
        if (ok) exchange_.output_tokens = i + 1;
    }
    if (!ok) co_return After::kGone;
    co_return Continue();
}

// Frames event_ as one HTTP chunk (plus the last-chunk marker when `last`) and writes it alone,
// after `delay`, so that delays between events are visible on the wire.
asio::awaitable<bool> Responder::SendEvent(milliseconds delay, bool last) {
    if (delay.count() > 0) co_await Sleep(delay);
    out_.clear();
    // Exactly the room the chunk needs: growing by doubling would copy a padded event once more.
    constexpr std::size_t kFraming = 16 + 2 + 7;  // Size line, CRLF, last-chunk marker.
    out_.reserve(event_.size() + kFraming);
    fmt::format_to(std::back_inserter(out_), "{:x}\r\n", event_.size());
    out_ += event_;
    out_ += last ? "\r\n0\r\n\r\n" : "\r\n";
    co_return co_await Emit(last);
}

// The terminating zero-length chunk alone: a clean end where the stream's end event should be.
asio::awaitable<bool> Responder::SendEnd(milliseconds delay) {
    if (delay.count() > 0) co_await Sleep(delay);
    out_ = "0\r\n\r\n";
    co_return co_await Emit(true);
}

// One write of a stream's next bytes — or, while a whole stream is held (`one_write`), kept for
// one write at its end.
asio::awaitable<bool> Responder::Emit(bool last) {
    if (!hold_) co_return co_await Write();
    held_ += out_;
    if (!last) co_return true;
    hold_ = false;
    out_.swap(held_);
    held_.clear();
    co_return co_await Write();
}

// Each interim response of `interim=` in its own write, so that a client sees them arrive apart.
asio::awaitable<bool> Responder::SendInterim(const FaultSpec& fault) {
    for (const int status : fault.interim) {
        out_.clear();
        AppendInterimResponse(out_, status);
        const bool ok = co_await Write();
        if (!ok) co_return false;
    }
    co_return true;
}

// late_response_ms: after the complete answer, a second, unsolicited 200 on the same connection,
// with a body of the requested API that no request asked for. The connection then goes on as
// `after` says, so the next request is read and answered as usual — behind the stray bytes.
asio::awaitable<After> Responder::SendLateResponse(milliseconds delay, After after) {
    if (delay.count() > 0) co_await Sleep(delay);
    const std::string body = LateResponseBody();
    out_.clear();
    AppendHeadStart(out_, 200, kJson, body.size(), true);
    out_ += "\r\n";
    out_ += body;
    const bool ok = co_await Write();
    co_return ok ? after : After::kGone;
}

std::string Responder::LateResponseBody() {
    const std::string text = fmt::format("Late reply from {}.", exchange_.model);
    const openai::ReplyText reply = openai::ReplyText::Verbatim(text);
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::string body;
    if (exchange_.api == Api::kMessages) {
        const std::string id = NewId("msg_", 24);
        anthropic::AppendMessage(body, {id, exchange_.model}, reply, {exchange_.prompt_tokens, 1});
    } else if (exchange_.api == Api::kResponses) {
        const std::string id = NewId("resp_", 32);
        const std::string message_id = NewId("msg_", 32);
        responses::Response response;
        response.id = id;
        response.created_at = now;
        response.model = exchange_.model;
        response.input_tokens = exchange_.prompt_tokens;
        response.message_id = message_id;
        response.reply = &reply;
        responses::AppendResponse(body, response);
    } else {
        const std::string id = NewId("chatcmpl-", 24);
        openai::AppendCompletion(body, {id, now, exchange_.model}, reply,
                                 {exchange_.prompt_tokens, 1});
    }
    return body;
}

std::string Responder::StructuredText(const FaultSpec* fault) const {
    if (exchange_.output_schema.empty()) return {};
    boost::system::error_code ec;
    const boost::json::value schema = boost::json::parse(exchange_.output_schema, ec);
    if (ec) return {};
    return StructuredReply(schema, fault != nullptr && fault->invalid_output);
}

// `prefix` and `digits` fresh lowercase hex digits (at most 32).
std::string Responder::NewId(std::string_view prefix, std::size_t digits) {
    std::string id(prefix);
    worker_.AppendId(id);
    id.resize(prefix.size() + digits);
    return id;
}

}  // namespace switchyard::mock
