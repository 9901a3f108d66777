#include "api/chunk_facts.h"

#include <algorithm>
#include <boost/json/basic_parser_impl.hpp>
#include <cstdint>

#include "core/json.h"

namespace switchyard::api {
namespace {

// What a container open at some depth is, as far as ChunkFacts cares.
enum class Container : std::uint8_t { kRoot, kChoices, kFirstChoice, kDelta, kOther };

// The member names ChunkFacts reads, in the containers they belong to.
enum class Name : std::uint8_t {
    kOther,
    kType,
    kUsage,
    kChoices,
    kFinishReason,
    kDelta,
    kContent,
    kToolCalls,
    kFunctionCall,
    kRefusal
};

// What a value is, as far as ChunkFacts cares.
enum class Kind : std::uint8_t { kObject, kArray, kString, kNull, kOther };

// The SAX handler: tracks the containers down to a first choice's delta (depth 4) and records
// each fact when its value is seen, the last one standing.
class Reader {
  public:
    static constexpr std::size_t max_object_size = std::size_t(-1);
    static constexpr std::size_t max_array_size = std::size_t(-1);
    static constexpr std::size_t max_key_size = std::size_t(-1);
    static constexpr std::size_t max_string_size = std::size_t(-1);

    explicit Reader(ChunkFacts& facts) : facts_(facts) {}

    bool on_document_begin(boost::system::error_code&) { return true; }
    bool on_document_end(boost::system::error_code&) { return true; }
    bool on_object_begin(boost::system::error_code&) {
        Open(Kind::kObject);
        return true;
    }
    bool on_object_end(std::size_t, boost::system::error_code&) {
        --depth_;
        return true;
    }
    bool on_array_begin(boost::system::error_code&) {
        Open(Kind::kArray);
        return true;
    }
    bool on_array_end(std::size_t, boost::system::error_code&) {
        --depth_;
        return true;
    }
    bool on_key_part(std::string_view part, std::size_t, boost::system::error_code&) {
        AppendKey(part);
        return true;
    }
    bool on_key(std::string_view part, std::size_t, boost::system::error_code&) {
        AppendKey(part);
        if (depth_ <= kTracked) names_[depth_] = key_overflow_ ? Name::kOther : NameOf(key());
        key_size_ = 0;
        key_overflow_ = false;
        return true;
    }
    bool on_string_part(std::string_view part, std::size_t, boost::system::error_code&) {
        AppendString(part);
        return true;
    }
    bool on_string(std::string_view part, std::size_t size, boost::system::error_code&) {
        AppendString(part);
        Value(Kind::kString, size);
        string_size_ = 0;
        return true;
    }
    bool on_number_part(std::string_view, boost::system::error_code&) { return true; }
    bool on_int64(std::int64_t, std::string_view, boost::system::error_code&) {
        Value(Kind::kOther, 0);
        return true;
    }
    bool on_uint64(std::uint64_t, std::string_view, boost::system::error_code&) {
        Value(Kind::kOther, 0);
        return true;
    }
    bool on_double(double, std::string_view, boost::system::error_code&) {
        Value(Kind::kOther, 0);
        return true;
    }
    bool on_bool(bool, boost::system::error_code&) {
        Value(Kind::kOther, 0);
        return true;
    }
    bool on_null(boost::system::error_code&) {
        Value(Kind::kNull, 0);
        return true;
    }
    bool on_comment_part(std::string_view, boost::system::error_code&) { return true; }
    bool on_comment(std::string_view, boost::system::error_code&) { return true; }

  private:
    static constexpr std::size_t kTracked = 4;  // root, choices, first choice, delta

    static Name NameOf(std::string_view name) {
        if (name == "type") return Name::kType;
        if (name == "usage") return Name::kUsage;
        if (name == "choices") return Name::kChoices;
        if (name == "finish_reason") return Name::kFinishReason;
        if (name == "delta") return Name::kDelta;
        if (name == "content") return Name::kContent;
        if (name == "tool_calls") return Name::kToolCalls;
        if (name == "function_call") return Name::kFunctionCall;
        if (name == "refusal") return Name::kRefusal;
        return Name::kOther;
    }

    std::string_view key() const { return std::string_view(key_.data(), key_size_); }

    void AppendKey(std::string_view part) {
        if (key_size_ + part.size() > key_.size()) {
            key_overflow_ = true;
            return;
        }
        std::copy(part.begin(), part.end(), key_.begin() + key_size_);
        key_size_ += part.size();
    }

    // A string value's characters: kept only for the root's "type", in a head and a tail.
    void AppendString(std::string_view part) {
        if (depth_ != 1 || containers_[1] != Container::kRoot || names_[1] != Name::kType) return;
        for (const char c : part) {
            if (string_size_ < string_head_.size()) string_head_[string_size_] = c;
            std::rotate(string_tail_.begin(), string_tail_.begin() + 1, string_tail_.end());
            string_tail_.back() = c;
            ++string_size_;
        }
    }

    // A value begins (containers) or is complete (scalars) in the container open at depth_.
    void Value(Kind kind, std::size_t string_size) {
        if (depth_ == 0) {
            facts_.object = kind == Kind::kObject;
            return;
        }
        if (depth_ > kTracked) return;
        const Name name = names_[depth_];
        switch (containers_[depth_]) {
            case Container::kRoot:
                if (name == Name::kType) {
                    facts_.type_is_string = kind == Kind::kString;
                    facts_.type_size = string_size;
                    facts_.type_head = string_head_;
                    // The last min(size, 8) characters, at the end of the tail.
                    facts_.type_tail = string_tail_;
                } else if (name == Name::kUsage) {
                    facts_.has_usage = true;
                } else if (name == Name::kChoices) {
                    facts_.choices_is_array = kind == Kind::kArray;
                    facts_.choices = 0;
                    facts_.first_choice_object = false;
                    ClearFirstChoice();
                }
                return;
            case Container::kChoices:
                if (facts_.choices++ == 0) facts_.first_choice_object = kind == Kind::kObject;
                return;
            case Container::kFirstChoice:
                if (name == Name::kFinishReason) {
                    facts_.finish_reason = kind != Kind::kNull;
                } else if (name == Name::kDelta) {
                    facts_.delta_object = kind == Kind::kObject;
                    ClearDelta();
                }
                return;
            case Container::kDelta:
                if (name == Name::kContent) {
                    facts_.content = kind == Kind::kString && string_size > 0;
                } else if (name == Name::kToolCalls) {
                    facts_.tool_calls = true;
                } else if (name == Name::kFunctionCall) {
                    facts_.function_call = true;
                } else if (name == Name::kRefusal) {
                    facts_.refusal = kind != Kind::kNull;
                }
                return;
            case Container::kOther:
                return;
        }
    }

    // A container opens: a value of its parent, then the container its members are read in.
    void Open(Kind kind) {
        Value(kind, 0);
        Container inner = Container::kOther;
        if (depth_ == 0) {
            inner = kind == Kind::kObject ? Container::kRoot : Container::kOther;
        } else if (depth_ <= kTracked) {
            const Name name = names_[depth_];
            switch (containers_[depth_]) {
                case Container::kRoot:
                    if (name == Name::kChoices && kind == Kind::kArray) inner = Container::kChoices;
                    break;
                case Container::kChoices:
                    if (facts_.choices == 1 && kind == Kind::kObject) {
                        inner = Container::kFirstChoice;
                    }
                    break;
                case Container::kFirstChoice:
                    if (name == Name::kDelta && kind == Kind::kObject) inner = Container::kDelta;
                    break;
                default:
                    break;
            }
        }
        ++depth_;
        if (depth_ <= kTracked) {
            containers_[depth_] = inner;
            names_[depth_] = Name::kOther;
        }
    }

    void ClearFirstChoice() {
        facts_.finish_reason = false;
        facts_.delta_object = false;
        ClearDelta();
    }
    void ClearDelta() {
        facts_.content = false;
        facts_.tool_calls = false;
        facts_.function_call = false;
        facts_.refusal = false;
    }

    ChunkFacts& facts_;
    std::size_t depth_ = 0;
    std::array<Container, kTracked + 1> containers_{};
    std::array<Name, kTracked + 1> names_{};
    std::array<char, 16> key_{};  // the longest name read is 13 characters
    std::size_t key_size_ = 0;
    bool key_overflow_ = false;
    std::array<char, 32> string_head_{};
    std::array<char, 8> string_tail_{};
    std::size_t string_size_ = 0;
};

}  // namespace

bool ChunkFacts::TypeIs(std::string_view text) const {
    return type_is_string && type_size == text.size() && text.size() <= type_head.size() &&
           std::string_view(type_head.data(), text.size()) == text;
}

bool ChunkFacts::TypeStartsWith(std::string_view prefix) const {
    return type_is_string && type_size >= prefix.size() && prefix.size() <= type_head.size() &&
           std::string_view(type_head.data(), prefix.size()) == prefix;
}

bool ChunkFacts::TypeEndsWith(std::string_view suffix) const {
    return type_is_string && type_size >= suffix.size() && suffix.size() <= type_tail.size() &&
           std::string_view(type_tail.data() + type_tail.size() - suffix.size(), suffix.size()) ==
               suffix;
}

ChunkFacts ReadChunkFacts(std::string_view json) {
    ChunkFacts facts;
    boost::json::parse_options options;
    options.max_depth = core::kMaxJsonDepth;
    boost::json::basic_parser<Reader> parser(options, facts);
    boost::system::error_code ec;
    const std::size_t used = parser.write_some(false, json.data(), json.size(), ec);
    facts.valid = !ec && used == json.size() && parser.done();
    return facts;
}

}  // namespace switchyard::api
