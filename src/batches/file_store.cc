#include "batches/file_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace switchyard::batches {
namespace {

[[noreturn]] void Fail(const std::string& what, const std::string& path) {
    throw std::runtime_error(fmt::format("{} {}: {}", what, path, std::strerror(errno)));
}

}  // namespace

FileStore::FileStore(std::string directory) : directory_(std::move(directory)) {
    std::error_code ec;
    std::filesystem::create_directories(directory_, ec);
    if (ec) {
        throw std::runtime_error(
            fmt::format("cannot create the batch file directory {}: {}", directory_, ec.message()));
    }
}

std::string FileStore::PathOf(std::string_view id) const {
    return directory_ + "/" + std::string(id);
}

void FileStore::Remove(std::string_view id) const {
    std::error_code ec;
    std::filesystem::remove(PathOf(id), ec);
}

FileStore::Writer::Writer(const FileStore& store, std::string_view id)
    : path_(store.PathOf(id)), temporary_(path_ + ".part") {
    file_ = std::fopen(temporary_.c_str(), "wb");
    if (file_ == nullptr) Fail("cannot create", temporary_);
}

FileStore::Writer::~Writer() {
    if (file_ == nullptr) return;
    std::fclose(file_);
    std::remove(temporary_.c_str());
}

void FileStore::Writer::Append(std::string_view bytes) {
    if (bytes.empty()) return;
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
        Fail("cannot write", temporary_);
    }
    bytes_ += static_cast<std::int64_t>(bytes.size());
}

void FileStore::Writer::Keep() {
    if (std::fflush(file_) != 0 || ::fsync(fileno(file_)) != 0) Fail("cannot write", temporary_);
    std::fclose(file_);
    file_ = nullptr;
    if (std::rename(temporary_.c_str(), path_.c_str()) != 0) Fail("cannot rename", temporary_);
    // The rename reaches the disk with its directory.
    const std::string directory = std::filesystem::path(path_).parent_path().string();
    const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        const int synced = ::fsync(fd);
        ::close(fd);
        if (synced != 0) Fail("cannot write", directory);
    }
}

LineReader::LineReader(const std::string& path, std::int64_t offset) : offset_(offset) {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) Fail("cannot open", path);
    if (offset > 0 && ::fseeko(file_, offset, SEEK_SET) != 0) {
        std::fclose(file_);
        file_ = nullptr;
        Fail("cannot seek in", path);
    }
}

LineReader::~LineReader() {
    if (file_ != nullptr) std::fclose(file_);
}

void LineReader::Seek(std::int64_t offset) {
    if (::fseeko(file_, offset, SEEK_SET) != 0) Fail("cannot seek in", "a batch file");
    offset_ = offset;
}

bool LineReader::Next(std::string& line, std::int64_t& offset) {
    line.clear();
    offset = offset_;
    int c = 0;
    bool any = false;
    while ((c = std::getc(file_)) != EOF) {
        any = true;
        ++offset_;
        if (c == '\n') break;
        line.push_back(static_cast<char>(c));
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return any;
}

}  // namespace switchyard::batches
