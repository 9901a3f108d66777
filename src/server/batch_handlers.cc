#include "server/batch_handlers.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <unordered_set>

#include "api/multipart.h"
#include "batches/batch_job.h"
#include "batches/batch_lines.h"
#include "batches/batch_records.h"
#include "core/names.h"
#include "core/sha256.h"
#include "server/admin_handlers.h"
#include "server/batch_runner.h"
#include "server/http_io.h"

namespace switchyard::server {
namespace {

namespace json = boost::json;
namespace records = batches::records;
using batches::BatchFile;
using batches::BatchJob;

// Who asks: a client key's hash, or everyone's (the master key, or a gateway without keys).
struct Caller {
    std::string owner;
    bool all = false;
    bool Sees(const std::string& owner_of) const { return all || owner_of == owner; }
    std::optional<std::string> Filter() const {
        return all ? std::nullopt : std::optional<std::string>(owner);
    }
};

std::optional<Caller> Identify(const RequestContext& ctx, core::LocalError& error) {
    ServerContext& context = ctx.Context();
    if (context.keys.Empty() || PresentsMasterKey(ctx)) return Caller{"", true};
    const std::string_view presented = PresentedKey(ctx.request);
    if (const auto key = context.keys.Find(presented)) return Caller{key->Policy().sha256, false};
    error = {core::ErrorKind::kUnauthorized,
             presented.empty()
                 ? "Missing API key: send it as 'Authorization: Bearer KEY' or 'x-api-key: KEY'."
                 : "Incorrect API key provided."};
    return std::nullopt;
}

core::LocalError NotFound(std::string_view what, std::string_view id) {
    return {core::ErrorKind::kRouteNotFound,
            fmt::format("No such {}: {}", what, core::Printable(id)), "id"};
}

core::LocalError Invalid(std::string message, std::string param = {}) {
    return {core::ErrorKind::kInvalidRequest, std::move(message), std::move(param)};
}

core::LocalError StoreFailed(const std::string& why) {
    core::LocalError error{
        core::ErrorKind::kUnavailable,
        "The state store cannot serve this now: " + why + ". See switchyard_state_store_up."};
    error.status = 503;
    return error;
}

// A query parameter of the request's target, percent-decoded (nullopt: absent).
std::optional<std::string> Query(const RequestContext& ctx, std::string_view name) {
    const std::string_view target = ctx.request.target();
    const std::size_t q = target.find('?');
    if (q == std::string_view::npos) return std::nullopt;
    std::string_view rest = target.substr(q + 1);
    while (!rest.empty()) {
        const std::size_t amp = rest.find('&');
        const std::string_view pair = rest.substr(0, amp);
        const std::size_t eq = pair.find('=');
        if (pair.substr(0, eq) == name) {
            std::string raw(eq == std::string_view::npos ? std::string_view()
                                                         : pair.substr(eq + 1));
            std::replace(raw.begin(), raw.end(), '+', ' ');
            bool ok = false;
            std::string decoded = core::PercentDecode(raw, ok);
            return ok ? decoded : raw;
        }
        if (amp == std::string_view::npos) break;
        rest.remove_prefix(amp + 1);
    }
    return std::nullopt;
}

// A limit from the query: `fallback` when absent; nullopt (an error answered) when out of range.
std::optional<std::size_t> Limit(const RequestContext& ctx, std::size_t fallback, std::size_t max,
                                 core::LocalError& error) {
    const std::optional<std::string> text = Query(ctx, "limit");
    if (!text) return fallback;
    std::size_t n = 0;
    const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec != std::errc() || ptr != text->data() + text->size() || n < 1 || n > max) {
        error = Invalid(fmt::format("limit must be an integer from 1 to {}.", max), "limit");
        return std::nullopt;
    }
    return n;
}

// 405 on a collection (files, batches, message batches), which takes GET and POST.
asio::awaitable<bool> NotAllowed(RequestContext& ctx, std::string_view collection) {
    ctx.reply_headers.emplace_back("allow", "GET, POST");
    const core::LocalError error{core::ErrorKind::kMethodNotAllowed,
                                 "Use POST or GET on " + std::string(collection) + "."};
    co_return co_await WriteLocalError(ctx, error);
}

// 404 for a path below a collection that names nothing there.
asio::awaitable<bool> InvalidUrl(RequestContext& ctx) {
    const core::LocalError error{
        core::ErrorKind::kRouteNotFound,
        "Invalid URL (" + std::string(ctx.request.method_string()) + " " + ctx.path + ")"};
    co_return co_await WriteLocalError(ctx, error);
}

std::int64_t NowSeconds(const RequestContext& ctx) {
    return std::chrono::duration_cast<std::chrono::seconds>(
               ctx.Context().clock.WallNow().time_since_epoch())
        .count();
}

// The origin the client reached this gateway at, for Anthropic's absolute results_url.
std::string Origin(const RequestContext& ctx) {
    std::string scheme = "http";
    if (const auto it = ctx.request.find("x-forwarded-proto"); it != ctx.request.end()) {
        if (it->value() == "https") scheme = "https";
    }
    std::string host(ctx.request[http::field::host]);
    if (!core::IsSafeName(host) || host.find('/') != std::string::npos) host = "localhost";
    return scheme + "://" + host;
}

// Plain functions returning the write's coroutine: what they are given is used before they
// return, so a temporary argument is safe (g++ 12 may mishandle one passed to a coroutine).
asio::awaitable<bool> Fail(RequestContext& ctx, const core::LocalError& error) {
    return WriteLocalError(ctx, error);
}

asio::awaitable<bool> Json(RequestContext& ctx, const json::object& body) {
    return WriteBody(ctx, json::serialize(body), "application/json");
}

template <class T>
asio::awaitable<Stored<T>> OnStoreOf(RequestContext& ctx,
                                     std::function<T(state::DurableStore&)> work) {
    co_return co_await OnStore(ctx.Context().batches->Store(), std::move(work));
}

// Sends a kept file's bytes as a chunked stream, read from disk a piece at a time.
asio::awaitable<void> SendFile(RequestContext& ctx, const std::string& id,
                               std::string_view content_type, std::string disposition) {
    const std::string path = ctx.Context().batches->Files().PathOf(id);
    std::FILE* file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) {
        const core::LocalError error = NotFound("file content", id);
        co_await Fail(ctx, error);
        co_return;
    }
    std::string lines;
    AppendHeader(lines, "content-type", content_type);
    if (!disposition.empty()) AppendHeader(lines, "content-disposition", disposition);
    std::string chunk(64 * 1024, '\0');
    bool first = true;
    for (;;) {
        const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), file);
        const bool last = n < chunk.size();
        const Reply part{200, first ? &lines : nullptr, std::string_view(chunk.data(), n),
                         Reply::Framing::kStream, last};
        if (!co_await Respond(ctx, part)) break;
        first = false;
        if (last) break;
    }
    std::fclose(file);
}

// ---- OpenAI files ----

asio::awaitable<void> UploadFile(RequestContext& ctx, const Caller& caller) {
    std::string error_text;
    const std::string content_type(ctx.request[http::field::content_type]);
    const std::optional<std::vector<api::FormPart>> parts =
        api::ParseMultipart(content_type, ctx.request.body(), error_text);
    if (!parts) {
        const core::LocalError error = Invalid("Cannot read the upload: " + error_text + ".");
        co_await Fail(ctx, error);
        co_return;
    }
    const api::FormPart* file = nullptr;
    std::string purpose;
    for (const api::FormPart& part : *parts) {
        if (part.name == "file" && part.filename) file = &part;
        if (part.name == "purpose") purpose = std::string(part.data);
    }
    if (purpose.empty() || file == nullptr) {
        const core::LocalError error =
            Invalid(file == nullptr ? "Missing the 'file' part of the upload."
                                    : "Missing the 'purpose' field of the upload.",
                    file == nullptr ? "file" : "purpose");
        co_await Fail(ctx, error);
        co_return;
    }
    if (purpose != "batch") {
        const core::LocalError error = Invalid(
            "Switchyard keeps files for the Batch API only: 'purpose' must be 'batch'.", "purpose");
        co_await Fail(ctx, error);
        co_return;
    }
    const config::BatchesConfig& settings = ctx.Config().batches;
    if (file->data.size() > settings.max_file_bytes) {
        core::LocalError error{
            core::ErrorKind::kPayloadTooLarge,
            fmt::format("The file has {} bytes; batches.max_file_bytes allows {}.",
                        file->data.size(), settings.max_file_bytes),
            "file"};
        co_await Fail(ctx, error);
        co_return;
    }
    std::string name = std::filesystem::path(*file->filename).filename().string();
    if (name.empty()) name = "upload.jsonl";
    const BatchFile record{batches::NewFileId(),
                           caller.owner,
                           "batch",
                           name,
                           static_cast<std::int64_t>(file->data.size()),
                           NowSeconds(ctx)};
    const std::string_view bytes = file->data;
    batches::FileStore& files = ctx.Context().batches->Files();
    const std::size_t quota = settings.max_stored_bytes;
    // The bytes go to disk on the store's thread, not on this event loop; "" when kept.
    std::function<std::string(state::DurableStore&)> keep = [&](state::DurableStore& s) {
        const std::int64_t stored = records::StoredBytes(s.Database());
        if (static_cast<std::size_t>(stored) + bytes.size() > quota) {
            return fmt::format(
                "the batch files kept take {} bytes; with this one they would pass "
                "batches.max_stored_bytes ({}). Delete files that are no longer "
                "needed",
                stored, quota);
        }
        batches::FileStore::Writer writer(files, record.id);
        writer.Append(bytes);
        writer.Keep();
        records::PutFile(s.Database(), record);
        return std::string();
    };
    const Stored<std::string> kept = co_await OnStoreOf(ctx, std::move(keep));
    if (!kept.value) {
        const core::LocalError error = StoreFailed(kept.error);
        co_await Fail(ctx, error);
        co_return;
    }
    if (!kept.value->empty()) {
        core::LocalError error{core::ErrorKind::kInvalidRequest, *kept.value + ".", "file"};
        error.status = 413;
        co_await Fail(ctx, error);
        co_return;
    }
    co_await Json(ctx, batches::OpenAiFileObject(record));
}

// The file `id` if the caller sees it and it is one the files API shows.
asio::awaitable<std::optional<BatchFile>> VisibleFile(RequestContext& ctx, const Caller& caller,
                                                      const std::string& id) {
    std::function<std::optional<BatchFile>(state::DurableStore&)> get =
        [id](state::DurableStore& s) { return records::GetFile(s.Database(), id); };
    const Stored<std::optional<BatchFile>> file = co_await OnStoreOf(ctx, std::move(get));
    if (!file.value) {
        const core::LocalError error = StoreFailed(file.error);
        co_await Fail(ctx, error);
        co_return std::nullopt;
    }
    const std::optional<BatchFile>& found = *file.value;
    if (!found || !caller.Sees(found->owner) ||
        (found->purpose != "batch" && found->purpose != "batch_output")) {
        const core::LocalError error = NotFound("File object", id);
        co_await Fail(ctx, error);
        co_return std::nullopt;
    }
    co_return found;
}

asio::awaitable<void> ListFiles(RequestContext& ctx, const Caller& caller) {
    core::LocalError error;
    const std::optional<std::size_t> limit = Limit(ctx, 10'000, 10'000, error);
    if (!limit) {
        co_await Fail(ctx, error);
        co_return;
    }
    batches::PageQuery query;
    query.owner = caller.Filter();
    query.limit = *limit;
    query.after = Query(ctx, "after").value_or("");
    query.purpose = Query(ctx, "purpose").value_or("");
    query.ascending = Query(ctx, "order").value_or("desc") == "asc";
    std::function<std::pair<std::vector<BatchFile>, bool>(state::DurableStore&)> list =
        [query](state::DurableStore& s) {
            bool more = false;
            std::vector<BatchFile> files = records::ListFiles(s.Database(), query, more);
            return std::make_pair(std::move(files), more);
        };
    const auto page = co_await OnStoreOf(ctx, std::move(list));
    if (!page.value) {
        error = StoreFailed(page.error);
        co_await Fail(ctx, error);
        co_return;
    }
    json::array data;
    for (const BatchFile& f : page.value->first) data.push_back(batches::OpenAiFileObject(f));
    json::object body{{"object", "list"},
                      {"first_id", data.empty() ? json::value(nullptr) : data.front().at("id")},
                      {"last_id", data.empty() ? json::value(nullptr) : data.back().at("id")},
                      {"has_more", page.value->second}};
    body["data"] = std::move(data);
    co_await Json(ctx, body);
}

asio::awaitable<void> DeleteFile(RequestContext& ctx, const BatchFile& file) {
    batches::FileStore& files = ctx.Context().batches->Files();
    // "" when deleted, else the batch that still reads it.
    std::function<std::string(state::DurableStore&)> remove =
        [&files, id = file.id](state::DurableStore& s) {
            std::string reader = records::JobReading(s.Database(), id);
            if (!reader.empty()) return reader;
            records::DeleteFile(s.Database(), id);
            files.Remove(id);
            return std::string();
        };
    const Stored<std::string> removed = co_await OnStoreOf(ctx, std::move(remove));
    if (!removed.value || !removed.value->empty()) {
        const core::LocalError error =
            removed.value
                ? Invalid("The file " + file.id + " is the input of the batch " + *removed.value +
                              ", which has not ended; cancel it or "
                              "wait for it first.",
                          "file_id")
                : StoreFailed(removed.error);
        co_await Fail(ctx, error);
        co_return;
    }
    const json::object deleted{{"id", file.id}, {"object", "file"}, {"deleted", true}};
    co_await Json(ctx, deleted);
}

asio::awaitable<void> ServeFiles(RequestContext& ctx, const Caller& caller, std::string_view rest) {
    ctx.record.route = "files";
    const http::verb method = ctx.request.method();
    if (rest.empty()) {
        if (method == http::verb::post) {
            co_await UploadFile(ctx, caller);
        } else if (method == http::verb::get) {
            co_await ListFiles(ctx, caller);
        } else {
            co_await NotAllowed(ctx, "/v1/files");
        }
        co_return;
    }
    const bool content = rest.ends_with("/content");
    const std::string id(content ? rest.substr(0, rest.size() - 8) : rest);
    if (id.find('/') != std::string::npos ||
        !(method == http::verb::get || (method == http::verb::delete_ && !content))) {
        co_await InvalidUrl(ctx);
        co_return;
    }
    const std::optional<BatchFile> file = co_await VisibleFile(ctx, caller, id);
    if (!file) co_return;
    if (method == http::verb::delete_) {
        co_await DeleteFile(ctx, *file);
    } else if (content) {
        co_await SendFile(ctx, file->id, "application/octet-stream", {});
    } else {
        co_await Json(ctx, batches::OpenAiFileObject(*file));
    }
}

// ---- jobs, both APIs ----

asio::awaitable<std::optional<BatchJob>> VisibleJob(RequestContext& ctx, const Caller& caller,
                                                    const std::string& id, batches::Api api) {
    std::function<std::optional<BatchJob>(state::DurableStore&)> get =
        [id](state::DurableStore& s) { return records::GetJob(s.Database(), id); };
    const Stored<std::optional<BatchJob>> job = co_await OnStoreOf(ctx, std::move(get));
    if (!job.value) {
        const core::LocalError error = StoreFailed(job.error);
        co_await Fail(ctx, error);
        co_return std::nullopt;
    }
    const std::optional<BatchJob>& found = *job.value;
    if (!found || !caller.Sees(found->owner) || found->api != api) {
        const core::LocalError error =
            NotFound(api == batches::Api::kAnthropic ? "message batch" : "Batch object", id);
        co_await Fail(ctx, error);
        co_return std::nullopt;
    }
    co_return found;
}

json::object Describe(const RequestContext& ctx, const BatchJob& job) {
    return job.api == batches::Api::kAnthropic ? batches::AnthropicBatchObject(job, Origin(ctx))
                                               : batches::OpenAiBatchObject(job);
}

asio::awaitable<void> ListJobs(RequestContext& ctx, const Caller& caller, batches::Api api) {
    const bool anthropic = api == batches::Api::kAnthropic;
    core::LocalError error;
    const std::optional<std::size_t> limit = Limit(ctx, 20, anthropic ? 1000 : 100, error);
    if (!limit) {
        co_await Fail(ctx, error);
        co_return;
    }
    batches::PageQuery query;
    query.owner = caller.Filter();
    query.limit = *limit;
    query.after = Query(ctx, anthropic ? "after_id" : "after").value_or("");
    if (anthropic) {
        if (auto before = Query(ctx, "before_id"); before && !before->empty()) {
            // The page just newer than before_id: read upwards from it, shown newest first.
            query.after = *before;
            query.ascending = true;
        }
    }
    std::function<std::pair<std::vector<BatchJob>, bool>(state::DurableStore&)> list =
        [query, api](state::DurableStore& s) {
            bool more = false;
            std::vector<BatchJob> jobs = records::ListJobs(s.Database(), api, query, more);
            if (query.ascending) std::reverse(jobs.begin(), jobs.end());
            return std::make_pair(std::move(jobs), more);
        };
    const auto page = co_await OnStoreOf(ctx, std::move(list));
    if (!page.value) {
        error = StoreFailed(page.error);
        co_await Fail(ctx, error);
        co_return;
    }
    json::array data;
    for (const BatchJob& job : page.value->first) data.push_back(Describe(ctx, job));
    json::object body;
    if (!anthropic) body["object"] = "list";
    body["first_id"] = data.empty() ? json::value(nullptr) : data.front().at("id");
    body["last_id"] = data.empty() ? json::value(nullptr) : data.back().at("id");
    body["has_more"] = page.value->second;
    body["data"] = std::move(data);
    co_await Json(ctx, body);
}

asio::awaitable<void> CancelJob(RequestContext& ctx, const BatchJob& job) {
    if (batches::Ended(job.status) && job.status != batches::Status::kCancelled) {
        const core::LocalError error =
            Invalid(fmt::format("The batch {} has ended ({}); it cannot be cancelled.", job.id,
                                batches::StatusName(job.status)));
        co_await Fail(ctx, error);
        co_return;
    }
    const std::optional<BatchJob> now = co_await ctx.Context().batches->Cancel(job.id);
    co_await Json(ctx, Describe(ctx, now ? *now : job));
}

// Saves a new job (with the file of its lines, for a message batch) and starts it.
asio::awaitable<bool> StartJob(RequestContext& ctx, const BatchJob& job, const std::string* lines) {
    batches::FileStore& files = ctx.Context().batches->Files();
    const std::size_t quota = ctx.Config().batches.max_stored_bytes;
    std::function<std::string(state::DurableStore&)> save = [&](state::DurableStore& s) {
        if (lines != nullptr) {
            const std::int64_t stored = records::StoredBytes(s.Database());
            if (static_cast<std::size_t>(stored) + lines->size() > quota) {
                return fmt::format(
                    "the batch files kept take {} bytes; with this batch they "
                    "would pass batches.max_stored_bytes ({})",
                    stored, quota);
            }
            batches::FileStore::Writer writer(files, job.input_file_id);
            writer.Append(*lines);
            writer.Keep();
            records::PutFile(s.Database(),
                             {job.input_file_id, job.owner, "message_batch",
                              job.id + "_requests.jsonl", writer.Bytes(), job.created_s});
        }
        records::PutJob(s.Database(), job);
        return std::string();
    };
    const Stored<std::string> saved = co_await OnStoreOf(ctx, std::move(save));
    if (!saved.value || !saved.value->empty()) {
        core::LocalError error =
            saved.value ? Invalid(*saved.value + ".") : StoreFailed(saved.error);
        if (saved.value) error.status = 413;
        co_await Fail(ctx, error);
        co_return false;
    }
    ctx.Context().batches->Run(job.id);
    co_return true;
}

std::optional<json::object> ParseBody(RequestContext& ctx, core::LocalError& error) {
    boost::system::error_code ec;
    json::value body = json::parse(ctx.request.body(), ec);
    if (ec || !body.is_object()) {
        error = {core::ErrorKind::kMalformedJson, "The request body must be a JSON object."};
        return std::nullopt;
    }
    return std::move(body.as_object());
}

asio::awaitable<void> CreateOpenAiBatch(RequestContext& ctx, const Caller& caller) {
    core::LocalError error;
    std::optional<json::object> body = ParseBody(ctx, error);
    const auto text = [&](std::string_view key) -> std::optional<std::string> {
        const json::value* v = body->if_contains(key);
        if (v == nullptr || !v->is_string()) return std::nullopt;
        return std::string(v->as_string());
    };
    if (body) {
        const auto file_id = text("input_file_id");
        const auto endpoint = text("endpoint");
        const auto window = text("completion_window");
        if (!file_id) {
            error = Invalid("Missing required parameter: 'input_file_id'.", "input_file_id");
        } else if (!endpoint || !batches::BatchableEndpoint(*endpoint)) {
            error = Invalid(
                "'endpoint' must be one of /v1/chat/completions, /v1/responses, "
                "/v1/embeddings.",
                "endpoint");
        } else if (!window || !batches::ParseWindow(*window)) {
            error = Invalid(
                "'completion_window' must be '24h' (or a shorter window such as "
                "'90m').",
                "completion_window");
        } else {
            const json::value* metadata = body->if_contains("metadata");
            if (metadata != nullptr && !metadata->is_null()) {
                bool ok = metadata->is_object() && metadata->as_object().size() <= 16;
                if (ok) {
                    for (const auto& [k, v] : metadata->as_object()) {
                        ok = ok && k.size() <= 64 && v.is_string() && v.as_string().size() <= 512;
                    }
                }
                if (!ok) {
                    error = Invalid(
                        "'metadata' must be an object of at most 16 strings (keys "
                        "up to 64 characters, values up to 512).",
                        "metadata");
                }
            }
        }
    }
    if (!body || !error.message.empty()) {
        co_await Fail(ctx, error);
        co_return;
    }
    const std::string file_id = *text("input_file_id");
    const std::optional<BatchFile> file = co_await VisibleFile(ctx, caller, file_id);
    if (!file) co_return;
    if (file->purpose != "batch") {
        error = Invalid("The input file must have purpose 'batch'.", "input_file_id");
        co_await Fail(ctx, error);
        co_return;
    }
    BatchJob job;
    job.id = batches::NewBatchId(batches::Api::kOpenAi);
    job.owner = caller.owner;
    job.endpoint = *text("endpoint");
    job.input_file_id = file->id;
    job.completion_window = *text("completion_window");
    job.window_s = *batches::ParseWindow(job.completion_window);
    job.created_s = NowSeconds(ctx);
    if (const json::value* metadata = body->if_contains("metadata")) job.metadata = *metadata;
    if (co_await StartJob(ctx, job, nullptr)) co_await Json(ctx, batches::OpenAiBatchObject(job));
}

asio::awaitable<void> ServeBatches(RequestContext& ctx, const Caller& caller,
                                   std::string_view rest) {
    ctx.record.route = "batches";
    const http::verb method = ctx.request.method();
    if (rest.empty()) {
        if (method == http::verb::post) {
            co_await CreateOpenAiBatch(ctx, caller);
        } else if (method == http::verb::get) {
            co_await ListJobs(ctx, caller, batches::Api::kOpenAi);
        } else {
            co_await NotAllowed(ctx, "/v1/batches");
        }
        co_return;
    }
    const bool cancel = rest.ends_with("/cancel");
    const std::string id(cancel ? rest.substr(0, rest.size() - 7) : rest);
    if (id.find('/') != std::string::npos ||
        (cancel ? method != http::verb::post : method != http::verb::get)) {
        co_await InvalidUrl(ctx);
        co_return;
    }
    const std::optional<BatchJob> job = co_await VisibleJob(ctx, caller, id, batches::Api::kOpenAi);
    if (!job) co_return;
    if (cancel) {
        co_await CancelJob(ctx, *job);
    } else {
        co_await Json(ctx, batches::OpenAiBatchObject(*job));
    }
}

// ---- Anthropic message batches ----

asio::awaitable<void> CreateMessageBatch(RequestContext& ctx, const Caller& caller) {
    core::LocalError error;
    std::optional<json::object> body = ParseBody(ctx, error);
    const json::value* requests = body ? body->if_contains("requests") : nullptr;
    const int max_lines = ctx.Config().batches.max_lines;
    if (body && (requests == nullptr || !requests->is_array() || requests->as_array().empty() ||
                 requests->as_array().size() > static_cast<std::size_t>(max_lines))) {
        error = Invalid(fmt::format("'requests' must be a list of 1 to {} requests.", max_lines),
                        "requests");
    }
    std::string lines;
    if (body && error.message.empty()) {
        std::unordered_set<std::string> seen;
        std::size_t index = 0;
        for (const json::value& request : requests->as_array()) {
            const std::string param = fmt::format("requests.{}", index++);
            const json::object* r = request.if_object();
            const json::value* id = r != nullptr ? r->if_contains("custom_id") : nullptr;
            const json::value* params = r != nullptr ? r->if_contains("params") : nullptr;
            if (id == nullptr || !id->is_string() || !batches::ValidCustomId(id->as_string())) {
                error = Invalid(
                    "custom_id must be 1 to 64 characters of letters, digits, '_' "
                    "and '-'.",
                    param + ".custom_id");
                break;
            }
            if (!seen.insert(std::string(id->as_string())).second) {
                error = Invalid("Duplicate custom_id '" + std::string(id->as_string()) +
                                    "': each request's custom_id must be unique in its batch.",
                                param + ".custom_id");
                break;
            }
            if (params == nullptr || !params->is_object()) {
                error = Invalid("Each request needs its 'params' object.", param + ".params");
                break;
            }
            lines += json::serialize(json::object{{"custom_id", *id}, {"params", *params}});
            lines += '\n';
        }
    }
    if (!body || !error.message.empty()) {
        co_await Fail(ctx, error);
        co_return;
    }
    BatchJob job;
    job.id = batches::NewBatchId(batches::Api::kAnthropic);
    job.owner = caller.owner;
    job.api = batches::Api::kAnthropic;
    job.endpoint = "/v1/messages";
    job.input_file_id = batches::NewFileId();
    job.created_s = NowSeconds(ctx);
    job.total = static_cast<std::int64_t>(requests->as_array().size());
    body.reset();  // the lines are kept; the parsed body is not needed while they are written
    if (co_await StartJob(ctx, job, &lines)) {
        co_await Json(ctx, batches::AnthropicBatchObject(job, Origin(ctx)));
    }
}

asio::awaitable<void> DeleteMessageBatch(RequestContext& ctx, const BatchJob& job) {
    if (!batches::Ended(job.status)) {
        const core::LocalError error = Invalid(
            "The message batch " + job.id + " is still processing; cancel it before deleting it.");
        co_await Fail(ctx, error);
        co_return;
    }
    batches::FileStore& files = ctx.Context().batches->Files();
    std::function<bool(state::DurableStore&)> remove = [&files, job](state::DurableStore& s) {
        state::SqliteTransaction transaction(s.Database());
        for (const std::string& id : {job.input_file_id, job.output_file_id}) {
            if (id.empty()) continue;
            records::DeleteFile(s.Database(), id);
        }
        records::DeleteJob(s.Database(), job.id);
        transaction.Commit();
        files.Remove(job.input_file_id);
        if (!job.output_file_id.empty()) files.Remove(job.output_file_id);
        return true;
    };
    const Stored<bool> removed = co_await OnStoreOf(ctx, std::move(remove));
    if (!removed.value) {
        const core::LocalError error = StoreFailed(removed.error);
        co_await Fail(ctx, error);
        co_return;
    }
    const json::object deleted{{"id", job.id}, {"type", "message_batch_deleted"}};
    co_await Json(ctx, deleted);
}

asio::awaitable<void> ServeMessageBatches(RequestContext& ctx, const Caller& caller,
                                          std::string_view rest) {
    ctx.record.route = "message_batches";
    const http::verb method = ctx.request.method();
    if (rest.empty()) {
        if (method == http::verb::post) {
            co_await CreateMessageBatch(ctx, caller);
        } else if (method == http::verb::get) {
            co_await ListJobs(ctx, caller, batches::Api::kAnthropic);
        } else {
            co_await NotAllowed(ctx, "/v1/messages/batches");
        }
        co_return;
    }
    std::string_view action;
    std::string_view id = rest;
    if (const std::size_t slash = rest.find('/'); slash != std::string_view::npos) {
        id = rest.substr(0, slash);
        action = rest.substr(slash + 1);
    }
    const bool allowed =
        (action.empty() && (method == http::verb::get || method == http::verb::delete_)) ||
        (action == "results" && method == http::verb::get) ||
        (action == "cancel" && method == http::verb::post);
    const std::string batch_id(id);
    if (!allowed) {
        co_await InvalidUrl(ctx);
        co_return;
    }
    const std::optional<BatchJob> job =
        co_await VisibleJob(ctx, caller, batch_id, batches::Api::kAnthropic);
    if (!job) co_return;
    if (action == "cancel") {
        co_await CancelJob(ctx, *job);
    } else if (action == "results") {
        if (!batches::Ended(job->status) || job->output_file_id.empty()) {
            const core::LocalError error = Invalid("The message batch " + job->id +
                                                   " has not ended; its results are not ready.");
            co_await Fail(ctx, error);
            co_return;
        }
        co_await SendFile(ctx, job->output_file_id, "application/x-jsonl",
                          "attachment; filename*=utf-8''" + job->id + "_results.jsonl");
    } else if (method == http::verb::delete_) {
        co_await DeleteMessageBatch(ctx, *job);
    } else {
        co_await Json(ctx, Describe(ctx, *job));
    }
}

}  // namespace

bool IsBatchApiPath(std::string_view path) {
    for (const std::string_view prefix : {"/v1/files", "/v1/batches", "/v1/messages/batches"}) {
        if (path == prefix || (path.starts_with(prefix) && path[prefix.size()] == '/')) return true;
    }
    return false;
}

asio::awaitable<void> ServeBatchApi(RequestContext& ctx) {
    const std::string path = ctx.path;
    const bool anthropic = path.starts_with("/v1/messages/batches");
    if (anthropic) ctx.wire = api::Wire::kAnthropic;
    if (ctx.Context().batches == nullptr) {
        ctx.record.route = "batches";
        core::LocalError error{core::ErrorKind::kForbidden,
                               "The Batch APIs need the durable store: set state.backend to "
                               "sqlite (the default)."};
        co_await Fail(ctx, error);
        co_return;
    }
    core::LocalError error;
    const std::optional<Caller> caller = Identify(ctx, error);
    if (!caller) {
        ctx.record.route = "batches";
        co_await Fail(ctx, error);
        co_return;
    }
    const auto rest = [&](std::string_view prefix) {
        std::string_view r = std::string_view(path).substr(prefix.size());
        if (!r.empty()) r.remove_prefix(1);  // the '/'
        return r;
    };
    if (anthropic) {
        co_await ServeMessageBatches(ctx, *caller, rest("/v1/messages/batches"));
    } else if (path.starts_with("/v1/files")) {
        co_await ServeFiles(ctx, *caller, rest("/v1/files"));
    } else {
        co_await ServeBatches(ctx, *caller, rest("/v1/batches"));
    }
}

}  // namespace switchyard::server
