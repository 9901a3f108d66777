#include "batch_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace switchyard::mock::batches {
namespace {

constexpr std::string_view kBase62 =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

std::uint64_t RandomSeed() {
    std::random_device entropy;
    return (static_cast<std::uint64_t>(entropy()) << 32) | entropy();
}

// The positions [begin, end) of one page in a newest-first sequence of `size` ids, where
// `position(id)` finds an id or returns nullopt.
template <class Position>
std::optional<std::pair<std::size_t, std::size_t>> PageBounds(std::size_t size, std::size_t limit,
                                                              std::string_view after_id,
                                                              std::string_view before_id,
                                                              Position position) {
    if (!after_id.empty()) {
        const auto after = position(after_id);
        if (!after) return std::nullopt;
        const std::size_t begin = *after + 1;
        return std::pair{begin, std::min(size, begin + limit)};
    }
    if (!before_id.empty()) {
        const auto before = position(before_id);
        if (!before) return std::nullopt;
        return std::pair{*before > limit ? *before - limit : 0, *before};
    }
    return std::pair{std::size_t{0}, std::min(size, limit)};
}

}  // namespace

Store::Store() : Store(RandomSeed()) {}

Store::Store(std::uint64_t seed) : rng_(seed) {}

FileInfo Store::AddFile(std::string filename, std::string purpose, std::string content,
                        WallTime now) {
    std::lock_guard lock(mutex_);
    return AddFileLocked(std::move(filename), std::move(purpose), std::move(content), now);
}

FileInfo Store::AddFileLocked(std::string filename, std::string purpose, std::string content,
                              WallTime now) {
    StoredFile file;
    file.info.id = "file-" + Base62(24);
    file.info.filename = std::move(filename);
    file.info.purpose = std::move(purpose);
    file.info.bytes = content.size();
    file.info.created = now;
    file.content = std::move(content);
    FileInfo info = file.info;
    file_order_.push_back(info.id);
    files_.emplace(info.id, std::move(file));
    return info;
}

std::optional<FileInfo> Store::File(std::string_view id) const {
    std::lock_guard lock(mutex_);
    const auto it = files_.find(id);
    if (it == files_.end()) return std::nullopt;
    return it->second.info;
}

std::optional<std::string> Store::FileContent(std::string_view id) const {
    std::lock_guard lock(mutex_);
    const auto it = files_.find(id);
    if (it == files_.end()) return std::nullopt;
    return it->second.content;
}

bool Store::DeleteFile(std::string_view id) {
    std::lock_guard lock(mutex_);
    const auto it = files_.find(id);
    if (it == files_.end()) return false;
    files_.erase(it);
    file_order_.erase(std::find(file_order_.begin(), file_order_.end(), id));
    return true;
}

Page<FileInfo> Store::Files(const std::optional<std::string>& purpose, std::size_t limit,
                            std::string_view after) const {
    std::lock_guard lock(mutex_);
    std::vector<const FileInfo*> newest_first;
    for (auto it = file_order_.rbegin(); it != file_order_.rend(); ++it) {
        const FileInfo& info = files_.find(*it)->second.info;
        if (!purpose || info.purpose == *purpose) newest_first.push_back(&info);
    }
    const auto bounds =
        PageBounds(newest_first.size(), limit, after, {},
                   [&newest_first](std::string_view id) -> std::optional<std::size_t> {
                       for (std::size_t i = 0; i < newest_first.size(); ++i) {
                           if (newest_first[i]->id == id) return i;
                       }
                       return std::nullopt;
                   });
    Page<FileInfo> page;
    if (!bounds) return page;
    for (std::size_t i = bounds->first; i < bounds->second; ++i) {
        page.items.push_back(*newest_first[i]);
    }
    page.has_more = bounds->second < newest_first.size();
    return page;
}

std::optional<OpenAiInput> Store::ReadInput(std::string_view file_id,
                                            std::string_view endpoint) const {
    std::lock_guard lock(mutex_);
    const auto it = files_.find(file_id);
    if (it == files_.end()) return std::nullopt;
    return ParseOpenAiInput(it->second.content, endpoint);
}

BatchInfo Store::CreateOpenAi(const OpenAiBatchRequest& request, OpenAiInput input, Plan plan,
                              WallTime now) {
    std::lock_guard lock(mutex_);
    StoredBatch batch;
    BatchInfo& info = batch.info;
    info.api = Api::kOpenAi;
    info.id = "batch_" + Hex32();
    info.created = now;
    info.endpoint = request.endpoint;
    info.input_file_id = request.input_file_id;
    info.completion_window = request.completion_window;
    info.metadata = request.metadata;
    info.model = std::move(input.model);
    if (input.errors.empty()) {
        info.status = Status::kValidating;
        info.total = input.lines.size();
        batch.lines = std::move(input.lines);
    } else {
        info.status = Status::kFailed;
        info.failed_at = now;
        info.errors = std::move(input.errors);
    }
    batch.due = now + plan.duration;
    batch.expire = plan.expire;
    BatchInfo created = info;
    openai_order_.push_back(info.id);
    batches_.emplace(info.id, std::move(batch));
    return created;
}

BatchInfo Store::CreateMessageBatch(std::vector<Line> lines, Plan plan, WallTime now) {
    std::lock_guard lock(mutex_);
    StoredBatch batch;
    BatchInfo& info = batch.info;
    info.api = Api::kAnthropic;
    info.id = "msgbatch_" + Base62(24);
    info.created = now;
    info.status = Status::kInProgress;
    info.in_progress_at = now;
    info.total = lines.size();
    batch.lines = std::move(lines);
    batch.due = now + plan.duration;
    batch.expire = plan.expire;
    BatchInfo created = info;
    anthropic_order_.push_back(info.id);
    batches_.emplace(info.id, std::move(batch));
    return created;
}

std::optional<BatchInfo> Store::Get(Api api, std::string_view id, WallTime now,
                                    const AnswerLine& answer) {
    std::lock_guard lock(mutex_);
    StoredBatch* batch = FindBatch(api, id);
    if (batch == nullptr) return std::nullopt;
    Advance(*batch, now, answer);
    return batch->info;
}

std::optional<CancelOutcome> Store::Cancel(Api api, std::string_view id, WallTime now,
                                           const AnswerLine& answer) {
    std::lock_guard lock(mutex_);
    StoredBatch* batch = FindBatch(api, id);
    if (batch == nullptr) return std::nullopt;
    Advance(*batch, now, answer);
    BatchInfo& info = batch->info;
    if (info.Ended()) return CancelOutcome{false, info};
    info.status = Status::kCancelling;
    info.cancelling_at = now;
    return CancelOutcome{true, info};
}

Page<BatchInfo> Store::List(Api api, std::size_t limit, std::string_view after_id,
                            std::string_view before_id, WallTime now, const AnswerLine& answer) {
    std::lock_guard lock(mutex_);
    const std::vector<std::string>& order = Order(api);
    const std::size_t size = order.size();
    // Position i of the newest-first sequence is order[size - 1 - i].
    const auto bounds =
        PageBounds(size, limit, after_id, before_id,
                   [&order, size](std::string_view id) -> std::optional<std::size_t> {
                       const auto it = std::find(order.begin(), order.end(), id);
                       if (it == order.end()) return std::nullopt;
                       return size - 1 - static_cast<std::size_t>(it - order.begin());
                   });
    Page<BatchInfo> page;
    if (!bounds) return page;
    for (std::size_t i = bounds->first; i < bounds->second; ++i) {
        StoredBatch& batch = batches_.find(order[size - 1 - i])->second;
        Advance(batch, now, answer);
        page.items.push_back(batch.info);
    }
    page.has_more = before_id.empty() ? bounds->second < size : bounds->first > 0;
    return page;
}

std::optional<MessageResults> Store::Results(std::string_view id, WallTime now,
                                             const AnswerLine& answer) {
    std::lock_guard lock(mutex_);
    StoredBatch* batch = FindBatch(Api::kAnthropic, id);
    if (batch == nullptr) return std::nullopt;
    Advance(*batch, now, answer);
    MessageResults results{batch->info, std::nullopt};
    if (batch->info.Ended()) results.jsonl = batch->results;
    return results;
}

Deletion Store::DeleteMessageBatch(std::string_view id, WallTime now, const AnswerLine& answer) {
    std::lock_guard lock(mutex_);
    StoredBatch* batch = FindBatch(Api::kAnthropic, id);
    if (batch == nullptr) return Deletion::kNotFound;
    Advance(*batch, now, answer);
    if (!batch->info.Ended()) return Deletion::kNotEnded;
    anthropic_order_.erase(std::find(anthropic_order_.begin(), anthropic_order_.end(), id));
    batches_.erase(batches_.find(id));
    return Deletion::kDeleted;
}

Store::StoredBatch* Store::FindBatch(Api api, std::string_view id) {
    const auto it = batches_.find(id);
    if (it == batches_.end() || it->second.info.api != api) return nullptr;
    return &it->second;
}

void Store::Advance(StoredBatch& batch, WallTime now, const AnswerLine& answer) {
    BatchInfo& info = batch.info;
    if (info.status == Status::kValidating) {
        info.status = Status::kInProgress;
        info.in_progress_at = info.created;
    }
    if (info.status == Status::kCancelling) {
        Finish(batch, Status::kCancelled, now, answer);
    } else if (info.status == Status::kInProgress && now >= batch.due) {
        // It ended when its time was up, however much later it is read.
        Finish(batch, batch.expire ? Status::kExpired : Status::kCompleted, batch.due, answer);
    }
}

void Store::Finish(StoredBatch& batch, Status status, WallTime at, const AnswerLine& answer) {
    BatchInfo& info = batch.info;
    const std::size_t lines = batch.lines.size();
    const std::size_t answered = status == Status::kCompleted ? lines
                                 : status == Status::kExpired ? lines / 2
                                                              : 0;
    const Outcome unanswered = status == Status::kExpired ? Outcome::kExpired : Outcome::kCancelled;
    std::string output;
    std::string errors;
    for (std::size_t i = 0; i < lines; ++i) {
        const Line& line = batch.lines[i];
        Answer reply;
        Outcome outcome = unanswered;
        bool success = false;
        if (i < answered) {
            reply = answer(line);
            outcome = Outcome::kAnswered;
            success = reply.status >= 200 && reply.status < 300;
            ++(success ? info.succeeded : info.errored);
        } else {
            ++(outcome == Outcome::kExpired ? info.expired : info.cancelled);
        }
        if (info.api == Api::kOpenAi) {
            AppendOpenAiResultLine(success ? output : errors, "batch_req_" + Hex32(),
                                   line.custom_id, outcome, reply);
        } else {
            AppendMessageResultLine(batch.results, line.custom_id, outcome, reply);
        }
    }
    info.status = status;
    switch (status) {
        case Status::kCompleted:
            info.finalizing_at = at;
            info.completed_at = at;
            break;
        case Status::kExpired:
            info.expired_at = at;
            break;
        default:
            info.cancelled_at = at;
            break;
    }
    if (info.api == Api::kOpenAi) {
        // A file only for lines that have one: an id stays null otherwise.
        if (!output.empty()) {
            info.output_file_id = AddFileLocked(fmt::format("{}_output.jsonl", info.id),
                                                "batch_output", std::move(output), at)
                                      .id;
        }
        if (!errors.empty()) {
            info.error_file_id = AddFileLocked(fmt::format("{}_error.jsonl", info.id),
                                               "batch_output", std::move(errors), at)
                                     .id;
        }
    }
    std::vector<Line>().swap(batch.lines);
}

std::string Store::Base62(std::size_t digits) {
    std::string id;
    id.reserve(digits);
    for (std::size_t i = 0; i < digits; ++i) id.push_back(kBase62[rng_() % kBase62.size()]);
    return id;
}

std::string Store::Hex32() {
    const std::uint64_t high = rng_();
    const std::uint64_t low = rng_();
    return fmt::format("{:016x}{:016x}", high, low);
}

std::vector<std::string>& Store::Order(Api api) {
    return api == Api::kOpenAi ? openai_order_ : anthropic_order_;
}

}  // namespace switchyard::mock::batches
