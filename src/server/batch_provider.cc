// BatchRunner on a provider's batch API (docs/batches.md#on-the-providers-batch-api): a job's
// lines go to the deployment's batch endpoint (OpenAI files + batches, Anthropic message batches)
// in its wire format, the runner polls with backoff, and the results come back line by line into
// the client's API, priced at the batch price and counted against the job's key.

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>

#include "batches/batch_lines.h"
#include "batches/provider_lines.h"
#include "core/sha256.h"
#include "core/version.h"
#include "server/batch_runner.h"
#include "upstream/upstream_call.h"

namespace switchyard::server {
namespace {

using batches::BatchJob;
using batches::LineResult;
namespace json = boost::json;
namespace records = batches::records;

// The longest result line read from a provider (one answer: as large as a synchronous one may be).
constexpr std::size_t kMaxResultLine = std::size_t{64} << 20;

bool IsAnthropic(const config::Deployment& deployment) {
    return deployment.provider == config::Provider::kAnthropic;
}

// A JSON answer's string field ("" when absent).
std::string Field(const json::value& value, std::string_view key) {
    const json::object* o = value.if_object();
    const json::value* v = o != nullptr ? o->if_contains(key) : nullptr;
    return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// Why a provider refused: its error message, else the status.
std::string Refusal(std::string_view what, unsigned status, const std::string& body,
                    const std::string& error) {
    if (status == 0) return fmt::format("{}: {}", what, error);
    boost::system::error_code ec;
    const json::value parsed = json::parse(body, ec);
    std::string message;
    if (!ec) {
        const json::object* o = parsed.if_object();
        const json::value* e = o != nullptr ? o->if_contains("error") : nullptr;
        if (e != nullptr) message = Field(*e, "message");
    }
    return fmt::format("{}: HTTP {}{}{}", what, status, message.empty() ? "" : ": ", message);
}

// The headers every call to a provider's batch API carries: the user agent, and the
// deployment's key the way its provider takes it (the views refer to `user_agent` and the config).
void Authenticate(const config::Deployment& deployment, const std::string& user_agent,
                  providers::UpstreamRequest& request) {
    request.headers.emplace_back("user-agent", user_agent);
    const bool keyed = !deployment.api_key.Empty();
    if (IsAnthropic(deployment)) {
        request.headers.emplace_back("anthropic-version", deployment.anthropic_version);
        if (keyed) request.headers.emplace_back("x-api-key", deployment.api_key.Reveal());
    } else if (keyed) {
        request.authorization = "Bearer " + deployment.api_key.Reveal();
    }
}

}  // namespace

const config::Deployment* BatchRunner::ProviderDeployment(const config::Config& config,
                                                          const BatchJob& job) {
    if (job.mode == "gateway") return nullptr;
    const config::ModelGroup* group = config.FindGroup(job.model);
    if (group == nullptr || group->batch_mode == config::BatchMode::kGateway) return nullptr;
    for (const config::Deployment& deployment : group->deployments) {
        if (batches::ProviderTakes(deployment, job.api, job.endpoint)) return &deployment;
    }
    return nullptr;
}

asio::awaitable<BatchRunner::ProviderAnswer> BatchRunner::CallProvider(
    const config::Deployment& deployment, const ProviderRequest& call_request) {
    const std::string& body = call_request.body;
    const std::string& content_type = call_request.content_type;
    providers::UpstreamRequest request;
    request.method = call_request.method;
    request.target = deployment.base_url.path_prefix + call_request.target;
    const std::string user_agent = std::string("switchyard/") + kVersion;
    Authenticate(deployment, user_agent, request);
    if (!body.empty()) request.headers.emplace_back("content-type", content_type);
    request.shared = &body;
    upstream::UpstreamCall call(pool_, context_.clock);
    const auto now = context_.clock.Now();
    const upstream::UpstreamCall::Timeouts timeouts{
        std::chrono::seconds(10), std::chrono::seconds(120), now + std::chrono::minutes(10)};
    ProviderAnswer answer;
    if (!co_await call.Start(deployment, request, timeouts)) {
        answer.error = call.Error().message;
        co_return answer;
    }
    answer.status = call.Header().result_int();
    if (!co_await call.ReadAll(answer.body, std::size_t{64} << 20)) {
        answer.status = 0;
        answer.error = call.Error().message;
    }
    co_return answer;
}

asio::awaitable<bool> BatchRunner::ReadProviderLines(
    std::shared_ptr<JobRun> run, const config::Deployment& deployment, std::string target,
    const std::function<void(std::string_view)>& on_line) {
    providers::UpstreamRequest request;
    request.method = "GET";
    request.target = std::move(target);
    const std::string user_agent = std::string("switchyard/") + kVersion;
    Authenticate(deployment, user_agent, request);
    upstream::UpstreamCall call(pool_, context_.clock);
    const auto now = context_.clock.Now();
    const upstream::UpstreamCall::Timeouts timeouts{
        std::chrono::seconds(10), std::chrono::seconds(120), now + std::chrono::hours(1)};
    if (!co_await call.Start(deployment, request, timeouts)) co_return false;
    if (call.Header().result_int() != 200) {
        std::string ignored;
        co_await call.ReadAll(ignored, 1 << 20);
        co_return false;
    }
    std::string line;
    std::array<char, 16 * 1024> buffer{};
    while (!call.Done()) {
        const std::size_t n = co_await call.ReadSome(buffer.data(), buffer.size());
        if (n == 0) {
            if (call.Done()) break;
            co_return false;
        }
        for (std::size_t i = 0; i < n; ++i) {
            if (buffer[i] == '\n' || buffer[i] == '\r') {
                if (!line.empty()) on_line(line);
                line.clear();
            } else if (line.size() < kMaxResultLine) {
                line.push_back(buffer[i]);
            } else {
                // No answer is this large: the provider's file is not one to trust.
                call.Abort();
                co_return false;
            }
        }
        // Results are written as they come: what waits in memory stays bounded.
        if (run->pending.size() >= 1000) co_await Commit(run);
    }
    if (!line.empty()) on_line(line);
    co_return true;
}

asio::awaitable<bool> BatchRunner::SubmitToProvider(std::shared_ptr<JobRun> run,
                                                    const config::Deployment& deployment) {
    JobRun& r = *run;
    BatchJob& job = r.job;
    const bool anthropic = IsAnthropic(deployment);
    // The provider's input, built from the job's lines; lines that cannot be carried over end
    // here with the reason.
    std::string upstream;
    std::size_t sent = 0;
    const std::string boundary = "switchyard-" + core::RandomHex(12);
    try {
        batches::LineReader reader(files_->PathOf(job.input_file_id), 0);
        std::string text;
        std::int64_t offset = 0;
        std::int64_t number = 0;
        // OpenAI's input goes up as a multipart upload: its head, the lines, its end.
        if (anthropic) {
            upstream = "{\"requests\":[";
        } else {
            upstream = "--" + boundary +
                       "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--" +
                       boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" +
                       job.id + ".jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n";
        }
        while (reader.Next(text, offset)) {
            if (text.empty()) continue;
            const std::int64_t line = number++;
            if (std::binary_search(r.ended.begin(), r.ended.end(), line)) continue;
            batches::LineProblem problem;
            const std::optional<batches::InputLine> input =
                batches::ReadInputLine(job.api, job.endpoint, text, problem);
            std::variant<std::string, core::LocalError> body =
                input ? batches::ProviderBody(deployment, job.api, *input)
                      : std::variant<std::string, core::LocalError>(
                            core::LocalError{core::ErrorKind::kInvalidRequest, problem.message});
            if (const auto* error = std::get_if<core::LocalError>(&body)) {
                const api::Wire wire = job.api == batches::Api::kAnthropic ? api::Wire::kAnthropic
                                                                           : api::Wire::kOpenAi;
                const api::LocalReply reply = api::RenderError(wire, *error);
                r.pending.push_back({line, false,
                                     batches::AnswerLine(job.api, batches::CustomIdOf(text),
                                                         reply.status, "", reply.body)});
                CountLine(r, LineEnd::kFailed);
                continue;
            }
            const std::string& rendered = std::get<std::string>(body);
            const std::string id = batches::ProviderCustomId(line);
            if (anthropic) {
                if (sent > 0) upstream += ',';
                upstream += "{\"custom_id\":\"" + id + "\",\"params\":" + rendered + "}";
            } else {
                const std::string url =
                    job.api == batches::Api::kAnthropic ? "/v1/chat/completions" : job.endpoint;
                upstream += json::serialize(json::object{
                    {"custom_id", id}, {"method", "POST"}, {"url", url}, {"body", nullptr}});
                // The body goes in as rendered (no second parse): replace the null.
                upstream.resize(upstream.size() - 5);
                upstream += rendered + "}\n";
            }
            ++sent;
        }
        upstream += anthropic ? std::string("]}") : "\r\n--" + boundary + "--\r\n";
    } catch (const std::exception& e) {
        job.note = std::string("the input file cannot be read: ") + e.what();
        co_return false;
    }
    co_await Commit(run);
    if (sent == 0) co_return true;  // every line ended here
    std::string id;
    if (anthropic) {
        const ProviderRequest create{"POST", "/messages/batches", std::move(upstream),
                                     "application/json"};
        const ProviderAnswer created = co_await CallProvider(deployment, create);
        boost::system::error_code ec;
        const json::value parsed = json::parse(created.body, ec);
        id = created.status == 200 && !ec ? Field(parsed, "id") : std::string();
        if (id.empty()) {
            job.note =
                Refusal("creating the message batch", created.status, created.body, created.error);
            co_return false;
        }
    } else {
        const ProviderRequest upload{"POST", "/files", std::move(upstream),
                                     "multipart/form-data; boundary=" + boundary};
        const ProviderAnswer file = co_await CallProvider(deployment, upload);
        boost::system::error_code ec;
        const json::value uploaded = json::parse(file.body, ec);
        const std::string file_id =
            file.status == 200 && !ec ? Field(uploaded, "id") : std::string();
        if (file_id.empty()) {
            job.note = Refusal("uploading the input file", file.status, file.body, file.error);
            co_return false;
        }
        const std::string endpoint =
            job.api == batches::Api::kAnthropic ? "/v1/chat/completions" : job.endpoint;
        const json::object batch{{"input_file_id", file_id},
                                 {"endpoint", endpoint},
                                 {"completion_window", "24h"},
                                 {"metadata", {{"switchyard_batch", job.id}}}};
        const ProviderRequest create{"POST", "/batches", json::serialize(batch),
                                     "application/json"};
        const ProviderAnswer created = co_await CallProvider(deployment, create);
        const json::value parsed = json::parse(created.body, ec);
        id = created.status == 200 && !ec ? Field(parsed, "id") : std::string();
        if (id.empty()) {
            job.note = Refusal("creating the batch", created.status, created.body, created.error);
            co_return false;
        }
    }
    job.provider_batch_id = id;
    co_await Save(r);
    fmt::print(stderr, "switchyard: batches: {}: {} line(s) on {}'s batch API as {}\n", job.id,
               sent, deployment.name, id);
    co_return true;
}

asio::awaitable<bool> BatchRunner::TakeProviderResults(std::shared_ptr<JobRun> run,
                                                       const config::Deployment& deployment,
                                                       std::vector<std::string> targets,
                                                       bool expired) {
    JobRun& r = *run;
    BatchJob& job = r.job;
    // Where each line starts in the input file, to read its custom_id: 8 bytes a line.
    std::vector<std::int64_t> offsets;
    batches::LineReader reader(files_->PathOf(job.input_file_id), 0);
    {
        std::string text;
        std::int64_t offset = 0;
        while (reader.Next(text, offset)) {
            if (!text.empty()) offsets.push_back(offset);
        }
    }
    std::vector<bool> seen(offsets.size(), false);
    for (const std::int64_t line : r.ended) {
        if (line >= 0 && static_cast<std::size_t>(line) < seen.size()) seen[line] = true;
    }
    const double ratio = context_.Config()->batches.price_ratio;
    const std::shared_ptr<limits::ClientKeyState> key =
        job.owner.empty() ? nullptr : context_.keys.FindHash(job.owner);
    const auto custom_id = [&](std::int64_t line) {
        std::string text;
        std::int64_t offset = 0;
        reader.Seek(offsets[line]);
        reader.Next(text, offset);
        return batches::CustomIdOf(text);
    };
    const auto take = [&](std::string_view text) {
        std::optional<batches::ProviderResult> result =
            batches::ReadProviderResult(deployment, text);
        if (!result || result->line < 0 || static_cast<std::size_t>(result->line) >= seen.size() ||
            seen[result->line]) {
            return;
        }
        seen[result->line] = true;
        const std::string id = custom_id(result->line);
        // Requests cancelled because the job's own window ended expired.
        if (result->unrun && expired) result->unrun = batches::Unrun::kExpired;
        if (result->unrun) {
            r.pending.push_back(
                {result->line, false, batches::UnrunLine(job.api, id, *result->unrun)});
            CountLine(r, EndOf(*result->unrun));
            return;
        }
        const bool ok = result->status >= 200 && result->status < 300;
        const std::string body = batches::ClientBody(deployment, job.api, job.endpoint,
                                                     result->status, result->body, Now());
        r.pending.push_back(
            {result->line, ok,
             batches::AnswerLine(job.api, id, result->status, result->request_id, body)});
        if (!ok) {
            CountLine(r, LineEnd::kFailed);
            return;
        }
        CountLine(r, LineEnd::kSucceeded);
        const batches::Tokens tokens = batches::TokensOf(result->body);
        job.input_tokens += tokens.input;
        job.output_tokens += tokens.output;
        if (key) {
            key->AddToMonth(1, tokens.input + tokens.output,
                            batches::BatchCost(deployment, ratio, tokens),
                            context_.clock.WallNow());
        }
    };
    const std::function<void(std::string_view)> on_line = take;
    const std::chrono::milliseconds max_wait = context_.Config()->batches.max_poll;
    for (const std::string& target : targets) {
        // Until it is read whole: results that ran are never given up on.
        for (std::chrono::milliseconds wait(1000);; wait = std::min(wait * 2, max_wait)) {
            if (co_await ReadProviderLines(run, deployment, target, on_line)) break;
            if (stopping_ || context_.draining.load()) co_return false;
            fmt::print(stderr, "switchyard: batches: {}: cannot read {} from {}; trying again\n",
                       job.id, target, deployment.name);
            for (std::chrono::milliseconds left = wait; left.count() > 0;) {
                if (stopping_ || context_.draining.load()) co_return false;
                const std::chrono::milliseconds slice =
                    std::min(left, std::chrono::milliseconds(200));
                asio::steady_timer pause(ioc_, slice);
                co_await pause.async_wait(kTuple);
                left -= slice;
            }
        }
        co_await Commit(run);
    }
    // Lines the provider gave no result for did not run.
    const bool canceled = job.cancelling_s != 0 && !expired;
    for (std::size_t line = 0; line < seen.size(); ++line) {
        if (seen[line]) continue;
        const std::string id = custom_id(static_cast<std::int64_t>(line));
        r.pending.push_back(
            {static_cast<std::int64_t>(line), false,
             batches::UnrunLine(job.api, id,
                                canceled ? batches::Unrun::kCanceled : batches::Unrun::kExpired)});
        CountLine(r, canceled ? LineEnd::kCanceled : LineEnd::kExpired);
        if (r.pending.size() >= 1000) co_await Commit(run);
    }
    co_await Commit(run);
    co_return true;
}

asio::awaitable<BatchRunner::ProviderOutcome> BatchRunner::RunOnProvider(
    std::shared_ptr<JobRun> run, std::shared_ptr<const config::Config> config) {
    JobRun& r = *run;
    BatchJob& job = r.job;
    const config::Deployment* found = nullptr;
    for (const config::ModelGroup& group : config->models) {
        for (const config::Deployment& d : group.deployments) {
            if (d.name == job.deployment) found = &d;
        }
    }
    if (found == nullptr) {
        job.note = "the deployment " + job.deployment + " is no longer configured";
        co_return ProviderOutcome::kRefused;
    }
    const config::Deployment& deployment = *found;
    const bool anthropic = IsAnthropic(deployment);
    {
        std::function<std::vector<std::int64_t>(state::DurableStore&)> ended =
            [id = job.id](state::DurableStore& s) {
                return records::EndedLines(s.Database(), id, 0);
            };
        Stored<std::vector<std::int64_t>> lines = co_await OnStore(store_, std::move(ended));
        if (lines.value) r.ended = std::move(*lines.value);
    }
    if (job.provider_batch_id.empty()) {
        if (r.halt != JobRun::Halt::kNone) co_return ProviderOutcome::kRefused;  // never sent
        if (!co_await SubmitToProvider(run, deployment)) co_return ProviderOutcome::kRefused;
        if (job.provider_batch_id.empty()) co_return ProviderOutcome::kDone;  // no line to send
    }
    const std::string path =
        (anthropic ? "/messages/batches/" : "/batches/") + job.provider_batch_id;
    const config::BatchesConfig settings = config->batches;
    const ProviderRequest cancel{"POST", path + "/cancel", {}, {}};
    const ProviderRequest poll{"GET", path, {}, {}};
    std::chrono::milliseconds wait = settings.poll;
    std::vector<std::string> targets;
    bool expired = false;
    for (;;) {
        if (r.halt == JobRun::Halt::kStop || stopping_ || context_.draining.load()) {
            co_return ProviderOutcome::kStopped;
        }
        if ((r.halt == JobRun::Halt::kCancel || r.halt == JobRun::Halt::kExpire) &&
            !job.cancel_sent) {
            const ProviderAnswer cancelled = co_await CallProvider(deployment, cancel);
            if (cancelled.status != 0) {
                job.cancel_sent = true;
                co_await Save(r);
            }
        }
        if (Now() > job.ExpiresAt() + 3600) {
            // An hour past the window the provider's batch still cannot be read: its requests
            // end expired rather than keep the job open for ever.
            job.note = "the provider's batch " + job.provider_batch_id +
                       " could not be read within an hour after the completion window";
            fmt::print(stderr, "switchyard: batches: {}: {}\n", job.id, job.note);
            expired = true;
            break;
        }
        const ProviderAnswer polled = co_await CallProvider(deployment, poll);
        boost::system::error_code ec;
        const json::value batch = json::parse(polled.body, ec);
        if (polled.status == 200 && !ec) {
            if (anthropic && Field(batch, "processing_status") == "ended") {
                const std::string url = Field(batch, "results_url");
                // The results URL is absolute; its path goes to the deployment's host.
                std::string_view rest = url;
                if (const std::size_t scheme = rest.find("://"); scheme != std::string_view::npos) {
                    rest.remove_prefix(scheme + 3);
                    const std::size_t slash = rest.find('/');
                    rest = slash == std::string_view::npos ? std::string_view("/")
                                                           : rest.substr(slash);
                }
                targets.emplace_back(url.empty()
                                         ? deployment.base_url.path_prefix + path + "/results"
                                         : std::string(rest));
                expired = r.halt == JobRun::Halt::kExpire;
                break;
            }
            const std::string status = Field(batch, "status");
            if (!anthropic && status == "failed") {
                const json::value* errors = batch.as_object().if_contains("errors");
                std::string why = "the provider's batch failed";
                if (errors != nullptr && errors->is_object()) {
                    const json::value* data = errors->as_object().if_contains("data");
                    if (data != nullptr && data->is_array() && !data->as_array().empty()) {
                        why = Field(data->as_array().front(), "code") + ": " +
                              Field(data->as_array().front(), "message");
                    }
                }
                job.note = why;
                job.provider_batch_id.clear();
                co_return ProviderOutcome::kRefused;
            }
            if (!anthropic &&
                (status == "completed" || status == "expired" || status == "cancelled")) {
                for (const char* file : {"output_file_id", "error_file_id"}) {
                    const std::string id = Field(batch, file);
                    if (!id.empty()) {
                        targets.push_back(deployment.base_url.path_prefix + "/files/" + id +
                                          "/content");
                    }
                }
                expired = status == "expired" || r.halt == JobRun::Halt::kExpire;
                break;
            }
        }
        // The next poll after `wait`, or at once when the job is cancelled or its window ends
        // meanwhile (the provider is told at once).
        const JobRun::Halt halt = r.halt;
        for (std::chrono::milliseconds left = wait; left.count() > 0 && r.halt == halt;) {
            if (stopping_ || context_.draining.load()) co_return ProviderOutcome::kStopped;
            const std::chrono::milliseconds slice = std::min(left, std::chrono::milliseconds(200));
            asio::steady_timer pause(ioc_, slice);
            co_await pause.async_wait(kTuple);
            left -= slice;
        }
        wait = std::min(wait * 2, settings.max_poll);
    }
    if (!co_await TakeProviderResults(run, deployment, std::move(targets), expired)) {
        co_return ProviderOutcome::kStopped;  // read again at the next start
    }
    co_return ProviderOutcome::kDone;
}

}  // namespace switchyard::server
