#pragma once

#include <array>
#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace switchyard::core {

// The deepest JSON nesting Switchyard reads anywhere — client requests (both APIs, scanned or
// parsed), upstream answers and stream events, translation, config params — so a document is
// accepted or refused the same way on every path. A client's deeper request is a 400.
inline constexpr std::size_t kMaxJsonDepth = 128;

// boost::json::parse with kMaxJsonDepth; never throws: failures set `ec`. Numbers read as a
// double are what JSON can write again: a zero with a huge exponent ("0e777", which the parser
// reads as NaN) is 0, and a number beyond a double ("1e400" or 400 digits, read as infinity,
// which would be written out as `Infinity`, no JSON) fails with `exponent_overflow`.
boost::json::value ParseJson(std::string_view text, boost::system::error_code& ec,
                             boost::json::storage_ptr storage = {});

// Whether `text` is one well-formed JSON object within kMaxJsonDepth — checked without building a
// document (no allocation), for an upstream answer that is passed on as it came.
bool IsJsonObject(std::string_view text);

// Appends `value` serialised to `out`, without a temporary copy of its text.
void AppendJson(std::string& out, const boost::json::value& value);

// One member change for SerializeEdited: `value` replaces the member `key` (null: removes it); of
// several edits of one key, the last counts.
struct MemberEdit {
    std::string_view key;
    const boost::json::value* value = nullptr;
};

// `object` serialised with `edits` applied, without copying it: an edited member keeps its place,
// an edit of a member it does not have is appended (in the order of `edits`; removals of absent
// members do nothing). The document of a large request is not duplicated for a changed model.
std::string SerializeEdited(const boost::json::object& object, std::span<const MemberEdit> edits);

// What a top-level member of a JSON object holds (kAbsent: no such member).
enum class JsonKind { kAbsent, kNull, kBool, kNumber, kString, kArray, kObject };

// The shape of a JSON object document as far as a shape check needs it: whether `text` is one
// well-formed object within kMaxJsonDepth, and the kind of each top-level member named in `names`
// (at most kMaxShapeNames; the last of a repeated name counts). One pass, no document built.
inline constexpr std::size_t kMaxShapeNames = 4;
struct ObjectShape {
    bool object = false;
    std::array<JsonKind, kMaxShapeNames> members{};  // in the order of `names`
};
ObjectShape ReadObjectShape(std::string_view text, std::span<const std::string_view> names);

}  // namespace switchyard::core
