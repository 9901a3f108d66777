// The Batch APIs (docs/mock.md#batch-apis): OpenAI's files and batches under /v1/files and
// /v1/batches, Anthropic's message batches under /v1/messages/batches. Every route answers at once
// from the batch store; a batch's lines are answered by AnswerBatchLine when a read finds the
// batch ended.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "batch_store.h"
#include "form_data.h"
#include "responder.h"

namespace switchyard::mock {
namespace http = boost::beast::http;
using batches::WallTime;

namespace {

constexpr std::string_view kFiles = "/v1/files";
constexpr std::string_view kBatches = "/v1/batches";
constexpr std::string_view kMessageBatches = "/v1/messages/batches";
constexpr std::string_view kJsonLines = "application/x-jsonl";
constexpr std::string_view kOctetStream = "application/octet-stream";
constexpr std::string_view kInvalidRequest = "invalid_request_error";
constexpr std::array<std::string_view, 6> kPurposes = {"assistants", "batch",     "fine-tune",
                                                       "vision",     "user_data", "evals"};

// The answer of one route.
struct BatchReply final {
    int status = 200;
    std::string body;
    std::string_view content_type = kJson;
    std::string_view allow;  // the Allow header of a 405
    std::string fault;       // the batch fault applied, for the log
};

// What the routes need of the request being answered.
struct BatchCall final {
    Shared& shared;
    const Request& request;
    std::string_view path;        // without the query
    std::string_view request_id;  // of Anthropic's error bodies
    WallTime now;
    const batches::AnswerLine& answer;
};

// A path below a collection: the collection itself (empty id), "/{id}" or "/{id}/{action}".
struct Route final {
    std::string_view id;
    std::string_view action;
    bool valid = true;
};

Route RouteOf(std::string_view path, std::string_view collection) {
    std::string_view rest = path.substr(collection.size());
    if (rest.empty()) return {};
    rest.remove_prefix(1);  // The '/'.
    const auto slash = rest.find('/');
    Route route{rest.substr(0, slash),
                slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1)};
    route.valid = !route.id.empty() && route.action.find('/') == std::string_view::npos &&
                  (slash == std::string_view::npos || !route.action.empty());
    return route;
}

std::optional<std::string_view> RequestHeader(const Request& request, std::string_view name) {
    const auto it = request.find(name);
    if (it == request.end()) return std::nullopt;
    return it->value();
}

BatchReply Json(int status, std::string body) { return BatchReply{status, std::move(body)}; }

BatchReply OpenAiError(int status, std::string_view message, std::string_view param = {},
                       std::string_view code = {}) {
    return Json(status, openai::ErrorEnvelope(message, kInvalidRequest, param, code));
}

BatchReply AnthropicError(const BatchCall& call, int status, std::string_view type,
                          std::string_view message) {
    return Json(status, anthropic::ErrorEnvelope(type, message, call.request_id));
}

// OpenAI's 404 for a path it does not have, or its 405 for a method a path does not take.
BatchReply OpenAiNoRoute(const BatchCall& call, std::string_view allow) {
    const std::string_view method = call.request.method_string();
    if (allow.empty()) return Json(404, openai::InvalidUrlBody(method, call.path));
    BatchReply reply = Json(405, openai::InvalidMethodBody(method, call.path));
    reply.allow = allow;
    return reply;
}

BatchReply AnthropicNoRoute(const BatchCall& call, std::string_view allow) {
    if (allow.empty()) {
        return AnthropicError(call, 404, "not_found_error",
                              fmt::format("Not found: {}", call.path));
    }
    BatchReply reply = Json(405, anthropic::InvalidMethodBody(call.request.method_string(),
                                                              call.path, call.request_id));
    reply.allow = allow;
    return reply;
}

BatchReply NoSuchFile(std::string_view id) {
    return OpenAiError(404, fmt::format("No such File object: {}", id), "id");
}

BatchReply NoSuchBatch(std::string_view id) {
    return OpenAiError(404, fmt::format("No such Batch object: {}", id), "id");
}

BatchReply NoSuchMessageBatch(const BatchCall& call, std::string_view id) {
    return AnthropicError(call, 404, "not_found_error",
                          fmt::format("No message batch with id {}.", id));
}

// The `limit` query parameter in [1, max], `fallback` when absent; nullopt when invalid.
std::optional<std::size_t> Limit(const BatchCall& call, std::size_t max, std::size_t fallback) {
    const auto text = QueryParameter(call.request.target(), "limit");
    if (!text) return fallback;
    std::size_t limit = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), limit);
    if (ec != std::errc{} || end != text->data() + text->size() || limit < 1 || limit > max) {
        return std::nullopt;
    }
    return limit;
}

std::string Parameter(const BatchCall& call, std::string_view name) {
    return QueryParameter(call.request.target(), name).value_or(std::string());
}

// Where the client reached the mock, for Anthropic's absolute results_url: the Host header, else
// the address the mock listens on.
std::string Origin(const BatchCall& call) {
    const ServerOptions& options = call.shared.options;
    const std::string_view scheme = options.tls_cert.empty() ? "http" : "https";
    if (const auto host = RequestHeader(call.request, "host"); host && !host->empty()) {
        return fmt::format("{}://{}", scheme, *host);
    }
    return fmt::format("{}://{}:{}", scheme, options.host, options.port);
}

// The x-mock-fault header of a create call: absent, or a spec of batch keys only (an empty one
// switches the scenario off). `error` is set for any other header.
struct HeaderFault final {
    std::optional<FaultSpec> spec;
    std::string text;
    std::string error;
};

HeaderFault ReadHeaderFault(const BatchCall& call) {
    HeaderFault fault;
    const auto header = RequestHeader(call.request, "x-mock-fault");
    if (!header) return fault;
    ParsedFaultSpec parsed = ParseFaultSpec(*header);
    if (!parsed.ok()) {
        fault.error = fmt::format("x-mock-fault: {}", parsed.error);
    } else if (!parsed.spec.batch && header->find_first_not_of("; \t") != std::string_view::npos) {
        fault.error =
            "x-mock-fault: a batch creation takes only batch_ms, batch_expire and batch_refuse";
    }
    fault.spec = std::move(parsed.spec);
    fault.text = *header;
    return fault;
}

// How a new batch whose first request names `model` runs: the header's batch fault if the request
// has one, else the first batch rule of the scenario that matches (consuming it).
struct BatchSetup final {
    batches::Plan plan;
    std::optional<BatchRefusal> refusal;
    std::string fault;
};

BatchSetup SetUpBatch(const BatchCall& call, const HeaderFault& header, std::string_view model) {
    BatchSetup setup;
    setup.plan.duration = call.shared.options.batch_ms;
    const FaultSpec* spec = nullptr;
    const std::shared_ptr<const Scenario> scenario = call.shared.scenarios.Get();
    if (header.spec) {
        spec = &*header.spec;
        setup.fault = header.text;
    } else if (scenario) {
        if (const ScenarioRule* rule = scenario->Match(model, call.path, RuleScope::kBatch)) {
            spec = &rule->fault;
            setup.fault = rule->fault_text;
        }
    }
    if (spec != nullptr) {
        if (spec->batch_ms) setup.plan.duration = *spec->batch_ms;
        setup.plan.expire = spec->batch_expire;
        setup.refusal = spec->batch_refuse;
    }
    return setup;
}

// POST /v1/files: a multipart upload with the parts `file` and `purpose`.
BatchReply UploadFile(const BatchCall& call) {
    const ParsedForm form =
        ParseMultipart(RequestHeader(call.request, "content-type").value_or(std::string_view()),
                       call.request.body());
    if (!form.ok()) {
        return OpenAiError(400, fmt::format("Could not parse the multipart form: {}.", form.error));
    }
    const FormPart* file = form.Find("file");
    if (file == nullptr) return Json(400, openai::MissingParameterBody("file"));
    const FormPart* purpose = form.Find("purpose");
    if (purpose == nullptr) return Json(400, openai::MissingParameterBody("purpose"));
    if (std::find(kPurposes.begin(), kPurposes.end(), purpose->data) == kPurposes.end()) {
        return Json(400, openai::InvalidValueBody("purpose", purpose->data,
                                                  "'assistants', 'batch', 'fine-tune', 'vision', "
                                                  "'user_data' and 'evals'"));
    }
    const batches::FileInfo info =
        call.shared.batches.AddFile(file->filename.value_or("file"), std::string(purpose->data),
                                    std::string(file->data), call.now);
    return Json(200, batches::FileObject(info));
}

BatchReply ServeFiles(const BatchCall& call) {
    const Route route = RouteOf(call.path, kFiles);
    const http::verb method = call.request.method();
    batches::Store& store = call.shared.batches;
    if (!route.valid || (!route.action.empty() && route.action != "content")) {
        return OpenAiNoRoute(call, {});
    }
    if (route.id.empty()) {
        if (method == http::verb::post) return UploadFile(call);
        if (method != http::verb::get) return OpenAiNoRoute(call, "GET, POST");
        const auto limit = Limit(call, 10'000, 10'000);
        if (!limit) {
            return OpenAiError(400, "Invalid 'limit': expected an integer from 1 to 10000.",
                               "limit", "invalid_value");
        }
        const auto purpose = QueryParameter(call.request.target(), "purpose");
        const auto page = store.Files(purpose, *limit, Parameter(call, "after"));
        return Json(200, batches::FileList(page.items, page.has_more));
    }
    if (route.action == "content") {
        if (method != http::verb::get) return OpenAiNoRoute(call, "GET");
        auto content = store.FileContent(route.id);
        if (!content) return NoSuchFile(route.id);
        BatchReply reply = Json(200, std::move(*content));
        reply.content_type = kOctetStream;
        return reply;
    }
    if (method == http::verb::get) {
        const auto info = store.File(route.id);
        return info ? Json(200, batches::FileObject(*info)) : NoSuchFile(route.id);
    }
    if (method == http::verb::delete_) {
        return store.DeleteFile(route.id) ? Json(200, batches::FileDeleted(route.id))
                                          : NoSuchFile(route.id);
    }
    return OpenAiNoRoute(call, "GET, DELETE");
}

// POST /v1/batches. Checks in order: the fault header, the body, the input file (a batch whose
// input is invalid fails without reaching the scenario), then the batch fault.
BatchReply CreateOpenAiBatch(const BatchCall& call) {
    const HeaderFault header = ReadHeaderFault(call);
    if (!header.error.empty()) {
        BatchReply reply = Json(400, openai::ErrorEnvelope(header.error, "mock_error"));
        reply.fault = header.text;
        return reply;
    }
    const batches::OpenAiBatchRequest request =
        batches::ParseOpenAiBatchRequest(call.request.body());
    if (request.status != 0) return Json(request.status, request.error_body);
    std::optional<batches::OpenAiInput> input =
        call.shared.batches.ReadInput(request.input_file_id, request.endpoint);
    if (!input) return NoSuchFile(request.input_file_id);
    BatchSetup setup;
    setup.plan.duration = call.shared.options.batch_ms;
    if (input->errors.empty()) {
        setup = SetUpBatch(call, header, input->model.value_or(std::string()));
        if (setup.refusal) {
            input->errors.push_back(
                batches::OpenAiRefusal(*setup.refusal, input->model.value_or(std::string())));
            input->lines.clear();
            call.shared.stats.CountBatch(BatchEvent::kRefused);
        }
    }
    const batches::BatchInfo batch =
        call.shared.batches.CreateOpenAi(request, std::move(*input), setup.plan, call.now);
    call.shared.stats.CountBatch(BatchEvent::kCreated);
    BatchReply reply = Json(200, batches::OpenAiBatchObject(batch));
    reply.fault = std::move(setup.fault);
    return reply;
}

BatchReply ServeBatches(const BatchCall& call) {
    const Route route = RouteOf(call.path, kBatches);
    const http::verb method = call.request.method();
    batches::Store& store = call.shared.batches;
    if (!route.valid || (!route.action.empty() && route.action != "cancel")) {
        return OpenAiNoRoute(call, {});
    }
    if (route.id.empty()) {
        if (method == http::verb::post) return CreateOpenAiBatch(call);
        if (method != http::verb::get) return OpenAiNoRoute(call, "GET, POST");
        const auto limit = Limit(call, 100, 20);
        if (!limit) {
            return OpenAiError(400, "Invalid 'limit': expected an integer from 1 to 100.", "limit",
                               "invalid_value");
        }
        const auto page = store.List(batches::Api::kOpenAi, *limit, Parameter(call, "after"), {},
                                     call.now, call.answer);
        return Json(200, batches::OpenAiBatchList(page.items, page.has_more));
    }
    if (route.action == "cancel") {
        if (method != http::verb::post) return OpenAiNoRoute(call, "POST");
        const auto outcome = store.Cancel(batches::Api::kOpenAi, route.id, call.now, call.answer);
        if (!outcome) return NoSuchBatch(route.id);
        if (!outcome->accepted) {
            return OpenAiError(400, fmt::format("Cannot cancel a batch with status '{}'.",
                                                batches::StatusName(outcome->batch.status)));
        }
        return Json(200, batches::OpenAiBatchObject(outcome->batch));
    }
    if (method != http::verb::get) return OpenAiNoRoute(call, "GET");
    call.shared.stats.CountBatch(BatchEvent::kPoll);
    const auto batch = store.Get(batches::Api::kOpenAi, route.id, call.now, call.answer);
    return batch ? Json(200, batches::OpenAiBatchObject(*batch)) : NoSuchBatch(route.id);
}

// POST /v1/messages/batches. Checks in order: the fault header, the body, then the batch fault.
BatchReply CreateMessageBatch(const BatchCall& call) {
    const HeaderFault header = ReadHeaderFault(call);
    if (!header.error.empty()) {
        BatchReply reply = AnthropicError(call, 400, "mock_error", header.error);
        reply.fault = header.text;
        return reply;
    }
    batches::MessageBatchRequest request = batches::ParseMessageBatchRequest(call.request.body());
    if (!request.error.empty()) return AnthropicError(call, 400, kInvalidRequest, request.error);
    BatchSetup setup = SetUpBatch(call, header, request.model);
    if (setup.refusal) {
        call.shared.stats.CountBatch(BatchEvent::kRefused);
        const batches::MessageBatchRefusal refusal =
            batches::AnthropicRefusal(*setup.refusal, request.model);
        BatchReply reply = AnthropicError(call, refusal.status, refusal.type, refusal.message);
        reply.fault = std::move(setup.fault);
        return reply;
    }
    const batches::BatchInfo batch =
        call.shared.batches.CreateMessageBatch(std::move(request.lines), setup.plan, call.now);
    call.shared.stats.CountBatch(BatchEvent::kCreated);
    BatchReply reply = Json(200, batches::MessageBatchObject(batch, Origin(call)));
    reply.fault = std::move(setup.fault);
    return reply;
}

BatchReply ServeMessageBatches(const BatchCall& call) {
    const Route route = RouteOf(call.path, kMessageBatches);
    const http::verb method = call.request.method();
    batches::Store& store = call.shared.batches;
    if (!route.valid ||
        (!route.action.empty() && route.action != "cancel" && route.action != "results")) {
        return AnthropicNoRoute(call, {});
    }
    if (route.id.empty()) {
        if (method == http::verb::post) return CreateMessageBatch(call);
        if (method != http::verb::get) return AnthropicNoRoute(call, "GET, POST");
        const auto limit = Limit(call, 1000, 20);
        if (!limit) {
            return AnthropicError(call, 400, kInvalidRequest,
                                  "limit: Input should be an integer from 1 to 1000");
        }
        const std::string after_id = Parameter(call, "after_id");
        const std::string before_id = Parameter(call, "before_id");
        if (!after_id.empty() && !before_id.empty()) {
            return AnthropicError(call, 400, kInvalidRequest,
                                  "after_id and before_id cannot be used together");
        }
        const auto page = store.List(batches::Api::kAnthropic, *limit, after_id, before_id,
                                     call.now, call.answer);
        return Json(200, batches::MessageBatchList(page.items, page.has_more, Origin(call)));
    }
    if (route.action == "cancel") {
        if (method != http::verb::post) return AnthropicNoRoute(call, "POST");
        const auto outcome =
            store.Cancel(batches::Api::kAnthropic, route.id, call.now, call.answer);
        if (!outcome) return NoSuchMessageBatch(call, route.id);
        if (!outcome->accepted) {
            return AnthropicError(
                call, 400, kInvalidRequest,
                fmt::format("Batch {} has already ended and cannot be canceled.", route.id));
        }
        return Json(200, batches::MessageBatchObject(outcome->batch, Origin(call)));
    }
    if (route.action == "results") {
        if (method != http::verb::get) return AnthropicNoRoute(call, "GET");
        auto results = store.Results(route.id, call.now, call.answer);
        if (!results) return NoSuchMessageBatch(call, route.id);
        if (!results->jsonl) {
            return AnthropicError(
                call, 400, kInvalidRequest,
                fmt::format("Batch {} is still processing: its results are available once its "
                            "processing_status is ended.",
                            route.id));
        }
        BatchReply reply = Json(200, std::move(*results->jsonl));
        reply.content_type = kJsonLines;
        return reply;
    }
    if (method == http::verb::get) {
        call.shared.stats.CountBatch(BatchEvent::kPoll);
        const auto batch = store.Get(batches::Api::kAnthropic, route.id, call.now, call.answer);
        return batch ? Json(200, batches::MessageBatchObject(*batch, Origin(call)))
                     : NoSuchMessageBatch(call, route.id);
    }
    if (method == http::verb::delete_) {
        switch (store.DeleteMessageBatch(route.id, call.now, call.answer)) {
            case batches::Deletion::kNotFound:
                return NoSuchMessageBatch(call, route.id);
            case batches::Deletion::kNotEnded:
                return AnthropicError(
                    call, 400, kInvalidRequest,
                    fmt::format("Batch {} is still processing and cannot be deleted; cancel it "
                                "first.",
                                route.id));
            case batches::Deletion::kDeleted:
                return Json(200, batches::MessageBatchDeleted(route.id));
        }
    }
    return AnthropicNoRoute(call, "GET, DELETE");
}

}  // namespace

// A request on a Batch API path. The key is checked as on the provider APIs; rate limits do not
// apply. The request is logged like any provider request, without a model: the lines of its
// batches never are (they count in the stats' `batches`).
boost::asio::awaitable<After> Responder::HandleBatch() {
    BeginExchange();
    // Copies: answering a line sets this request's exchange aside for the line's.
    const std::string path = exchange_.path;
    const std::string request_id = exchange_.request_id;
    exchange_.anthropic = path.starts_with(kMessageBatches);
    std::uint64_t lines = 0;
    const batches::AnswerLine answer = [this, &lines](const batches::Line& line) {
        ++lines;
        return AnswerBatchLine(line);
    };
    const BatchCall call{shared_, *request_, path, request_id, std::chrono::system_clock::now(),
                         answer};
    BatchReply reply;
    if (!KeyAccepted()) {
        reply = Json(401, exchange_.anthropic ? anthropic::InvalidApiKeyBody(request_id)
                                              : openai::InvalidApiKeyBody());
    } else if (exchange_.anthropic) {
        reply = ServeMessageBatches(call);
    } else if (path.starts_with(kFiles)) {
        reply = ServeFiles(call);
    } else {
        reply = ServeBatches(call);
    }
    if (lines > 0) shared_.stats.CountBatch(BatchEvent::kLine, lines);
    Record(reply.status, reply.fault);
    out_.clear();
    AppendProviderHead(reply.status, reply.content_type, reply.body.size(), nullptr, reply.allow);
    out_ += reply.body;
    const bool ok = co_await Write();
    if (!ok) co_return After::kGone;
    co_return Continue();
}

}  // namespace switchyard::mock
