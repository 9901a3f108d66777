#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "batch_wire.h"

// The files and batches of the Batch APIs, in memory for the life of the process
// (docs/mock.md#batch-apis). A batch has no thread of its own: its state is worked out whenever it
// is read, from the time of the read, which every call takes as a parameter. The lines of a batch
// are answered, once, by the first read that finds the batch ended.
namespace switchyard::mock::batches {

// Answers one line as the synchronous API would. Called with the store's lock held: it must not
// call back into the store.
using AnswerLine = std::function<Answer(const Line&)>;

// How a batch runs, fixed when it is created.
struct Plan final {
    std::chrono::milliseconds duration = kDefaultBatchTime;  // from creation to its end
    bool expire = false;  // ends expired, with only the first half of its lines answered
};

// One page of a listing, newest first.
template <class T>
struct Page final {
    std::vector<T> items;
    bool has_more = false;
};

// The result of a cancel call.
struct CancelOutcome final {
    bool accepted = false;  // false: the batch had already ended
    BatchInfo batch;
};

// Anthropic's results of a batch: the batch, and its JSONL once it has ended.
struct MessageResults final {
    BatchInfo batch;
    std::optional<std::string> jsonl;
};

enum class Deletion { kNotFound, kNotEnded, kDeleted };

// Thread-safe: one mutex guards everything.
class Store final {
  public:
    Store();                             // ids from a random seed
    explicit Store(std::uint64_t seed);  // reproducible ids

    // Files (OpenAI).
    FileInfo AddFile(std::string filename, std::string purpose, std::string content, WallTime now);
    std::optional<FileInfo> File(std::string_view id) const;
    std::optional<std::string> FileContent(std::string_view id) const;
    bool DeleteFile(std::string_view id);
    // Newest first, only those of `purpose` if set, starting after file `after` if set.
    Page<FileInfo> Files(const std::optional<std::string>& purpose, std::size_t limit,
                         std::string_view after) const;

    // The requests of file `file_id` for a batch on `endpoint`; nullopt if there is no such file.
    std::optional<OpenAiInput> ReadInput(std::string_view file_id, std::string_view endpoint) const;

    // A new OpenAI batch of `input`'s lines, answered as `validating`. An input with errors (a
    // refusal is one) makes a batch that failed at once and never runs.
    BatchInfo CreateOpenAi(const OpenAiBatchRequest& request, OpenAiInput input, Plan plan,
                           WallTime now);
    // A new Anthropic message batch, in progress.
    BatchInfo CreateMessageBatch(std::vector<Line> lines, Plan plan, WallTime now);

    // Batch `id` of `api` as of `now`; nullopt if there is none. Reads move a batch on: from
    // validating to in progress, from cancelling to cancelled, and once its time is up to
    // completed (or expired), answering its lines with `answer` then.
    std::optional<BatchInfo> Get(Api api, std::string_view id, WallTime now,
                                 const AnswerLine& answer);

    // Asks batch `id` to stop: a batch in progress becomes cancelling (and cancelled on the next
    // read, its lines unanswered); an ended one is left as it is. nullopt if there is none.
    std::optional<CancelOutcome> Cancel(Api api, std::string_view id, WallTime now,
                                        const AnswerLine& answer);

    // The batches of `api`, newest first, each read as by Get: the `limit` after `after_id`, or
    // with `before_id` the `limit` just before it (newer), or else the newest. An unknown cursor
    // gives an empty page.
    Page<BatchInfo> List(Api api, std::size_t limit, std::string_view after_id,
                         std::string_view before_id, WallTime now, const AnswerLine& answer);

    std::optional<MessageResults> Results(std::string_view id, WallTime now,
                                          const AnswerLine& answer);

    // Forgets an ended Anthropic batch.
    Deletion DeleteMessageBatch(std::string_view id, WallTime now, const AnswerLine& answer);

  private:
    struct StoredFile {
        FileInfo info;
        std::string content;
    };
    struct StoredBatch {
        BatchInfo info;
        WallTime due;  // when its time is up
        bool expire = false;
        std::vector<Line> lines;  // until it ends
        std::string results;      // Anthropic's JSONL, once it has ended
    };

    StoredBatch* FindBatch(Api api, std::string_view id);
    void Advance(StoredBatch& batch, WallTime now, const AnswerLine& answer);
    void Finish(StoredBatch& batch, Status status, WallTime at, const AnswerLine& answer);
    FileInfo AddFileLocked(std::string filename, std::string purpose, std::string content,
                           WallTime now);
    std::string Base62(std::size_t digits);
    std::string Hex32();
    std::vector<std::string>& Order(Api api);

    mutable std::mutex mutex_;
    std::mt19937_64 rng_;
    std::map<std::string, StoredFile, std::less<>> files_;
    std::vector<std::string> file_order_;  // oldest first
    std::map<std::string, StoredBatch, std::less<>> batches_;
    std::vector<std::string> openai_order_;  // oldest first
    std::vector<std::string> anthropic_order_;
};

}  // namespace switchyard::mock::batches
