#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::state {

// One reply in RESP2, the Redis serialization protocol
// (docs/state.md#how-a-replica-talks-to-redis).
struct RespValue {
    enum class Type { kSimple, kError, kInteger, kBulk, kNull, kArray };
    Type type = Type::kNull;
    std::string text;              // simple string, error message, or bulk string
    std::int64_t integer = 0;      // integer reply
    std::vector<RespValue> items;  // array elements

    bool IsError() const { return type == Type::kError; }
    bool IsNull() const { return type == Type::kNull; }
    // An integer reply, or a simple or bulk string that holds one; nullopt otherwise.
    std::optional<std::int64_t> AsInteger() const;
};

// Appends one command as a RESP array of bulk strings (how a client sends every command; binary
// safe).
void EncodeCommand(const std::vector<std::string>& args, std::string& out);
void EncodeCommand(std::initializer_list<std::string_view> args, std::string& out);

// An incremental RESP2 reply reader. Bytes may be split anywhere; a reply is handed out only once
// it is complete. Parsing resumes where it stopped: the elements of an array that arrives in many
// reads are each parsed once, as they arrive, so a large reply costs time linear in its size
// however it is split. A malformed stream (an unknown type byte, a bad length, nesting deeper than
// 16 levels, a bulk string over 512 MiB) is a protocol error and the reader stays failed: the
// connection must be dropped, as its replies can no longer be matched to commands. Not
// thread-safe; one per connection.
class RespReader final {
  public:
    enum class Status { kValue, kIncomplete, kError };

    void Feed(std::string_view bytes);
    // The next complete reply into `out`; kIncomplete when more bytes are needed.
    Status Next(RespValue& out);
    bool Failed() const { return failed_; }
    // Elements parsed so far (an array's header is one). Each is parsed once however its reply
    // is split: tests check the cost is linear with it.
    std::size_t ParsedElements() const { return parsed_elements_; }

  private:
    // An array whose elements are still arriving.
    struct Open {
        RespValue array;
        std::int64_t remaining = 0;
    };

    // Parses one element at `pos_`: a complete scalar (or empty array) into `out`, or the header
    // of a non-empty array, which is opened (`opened`). Advances `pos_` past what it parsed.
    Status ParseOne(RespValue& out, bool& opened);
    // The line that starts at `pos` (without CRLF); nullopt when its CRLF has not arrived.
    std::optional<std::string_view> Line(std::size_t pos) const;

    std::string buffer_;
    std::size_t pos_ = 0;     // where the next element starts; everything before it is parsed
    std::vector<Open> open_;  // arrays being read, outermost first
    std::size_t parsed_elements_ = 0;
    bool failed_ = false;
};

}  // namespace switchyard::state
