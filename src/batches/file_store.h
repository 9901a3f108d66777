#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace switchyard::batches {

// The bytes of the Batch APIs' files, one file per id in a directory beside the durable store
// (docs/batches.md#what-is-kept). Their records are in the store (batch_records.h). Throws
// std::runtime_error with the path and the reason when the disk refuses.
class FileStore final {
  public:
    // `directory` is created when missing.
    explicit FileStore(std::string directory);

    const std::string& Directory() const { return directory_; }
    std::string PathOf(std::string_view id) const;

    // A file being written: appended to, then kept (flushed to the disk and renamed into place)
    // or, when it ends without Keep, removed.
    class Writer final {
      public:
        Writer(const FileStore& store, std::string_view id);
        ~Writer();
        Writer(const Writer&) = delete;
        Writer& operator=(const Writer&) = delete;
        void Append(std::string_view bytes);
        std::int64_t Bytes() const { return bytes_; }
        void Keep();

      private:
        std::string path_;
        std::string temporary_;
        std::FILE* file_ = nullptr;
        std::int64_t bytes_ = 0;
    };

    void Remove(std::string_view id) const;

  private:
    std::string directory_;
};

// Reads a file's lines from a byte offset, one at a time, with a bounded buffer: a file of any
// length costs the longest line's memory.
class LineReader final {
  public:
    // Throws std::runtime_error when the file cannot be opened.
    LineReader(const std::string& path, std::int64_t offset);
    ~LineReader();
    LineReader(const LineReader&) = delete;
    LineReader& operator=(const LineReader&) = delete;

    // The next line without its line end (a trailing "\r" removed too); false at the end.
    // `offset` is where the line starts.
    bool Next(std::string& line, std::int64_t& offset);
    // Where the next line starts.
    std::int64_t Offset() const { return offset_; }
    // Reads on from `offset`. Throws std::runtime_error when the file cannot seek.
    void Seek(std::int64_t offset);

  private:
    std::FILE* file_ = nullptr;
    std::int64_t offset_ = 0;
};

}  // namespace switchyard::batches
