#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace switchyard::api {

// What a stream event's JSON says about its content (docs/providers.md#streams), read by one pass
// of the JSON parser without building a document: the relay asks this of every event before its
// stream's commit point. A member named twice counts with its last value, as a parsed document
// reads it.
struct ChunkFacts {
    bool valid = false;           // one well-formed JSON document
    bool object = false;          // ... and it is an object
    bool type_is_string = false;  // a string "type" member (Anthropic, the Responses API)
    std::size_t type_size = 0;    // that string: its length, its first 32 and last 8 characters
    std::array<char, 32> type_head{};
    std::array<char, 8> type_tail{};
    bool has_usage = false;            // a "usage" member, of any value
    bool choices_is_array = false;     // "choices" is an array ...
    std::size_t choices = 0;           // ... of this many elements
    bool first_choice_object = false;  // the first of them is an object, whose
    bool finish_reason = false;        //   "finish_reason" is there and not null,
    bool delta_object = false;         //   "delta" is an object, whose
    bool content = false;              //     "content" is a string of at least one character,
    bool tool_calls = false;           //     "tool_calls" is there,
    bool function_call = false;        //     "function_call" is there,
    bool refusal = false;              //     "refusal" is there and not null.

    bool TypeIs(std::string_view text) const;
    bool TypeStartsWith(std::string_view prefix) const;  // up to 32 characters
    bool TypeEndsWith(std::string_view suffix) const;    // up to 8 characters
};

ChunkFacts ReadChunkFacts(std::string_view json);

}  // namespace switchyard::api
