#include "answers/json_values.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/json.h"

namespace switchyard::answers {
namespace {

namespace json = boost::json;

// Every int64, uint64 and double converts to long double exactly when it has a 64-bit
// significand (x86-64's extended precision; binary128 elsewhere), so one comparison is exact.
static_assert(std::numeric_limits<long double>::digits >= 64);

long double Exact(const json::value& number) {
    switch (number.kind()) {
        case json::kind::int64:
            return static_cast<long double>(number.get_int64());
        case json::kind::uint64:
            return static_cast<long double>(number.get_uint64());
        default:
            return static_cast<long double>(number.get_double());
    }
}

constexpr std::size_t kShownBytes = 64;

// `text` cut to at most kShownBytes at a UTF-8 character boundary, "…" added when cut.
std::string Cut(std::string_view text) {
    if (text.size() <= kShownBytes) return std::string(text);
    std::size_t end = kShownBytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    return std::string(text.substr(0, end)) + "…";
}

void AppendNumber(const json::value& number, std::string& out) {
    char digits[32];
    std::to_chars_result written{};
    if (number.is_int64()) {
        written = std::to_chars(digits, digits + sizeof digits, number.get_int64());
    } else if (number.is_uint64()) {
        written = std::to_chars(digits, digits + sizeof digits, number.get_uint64());
    } else {
        // An integral double in range is written as that integer, so 1.0 and 1 have one form;
        // -0.0 becomes 0, which it equals. The bounds are -2^63 and 2^64, both exact in double.
        const double d = number.get_double();
        if (std::trunc(d) == d && d >= -9223372036854775808.0 && d < 18446744073709551616.0) {
            written =
                d < 0
                    ? std::to_chars(digits, digits + sizeof digits, static_cast<std::int64_t>(d))
                    : std::to_chars(digits, digits + sizeof digits, static_cast<std::uint64_t>(d));
        } else {
            written = std::to_chars(digits, digits + sizeof digits, d);  // shortest round trip
        }
    }
    out.push_back('n');
    out.append(digits, written.ptr);
    out.push_back(';');
}

// Strings and keys carry their length, so no byte inside them needs escaping.
void AppendString(std::string_view text, std::string& out) {
    out.push_back('s');
    out.append(std::to_string(text.size()));
    out.push_back(':');
    out.append(text);
}

constexpr std::pair<std::uint8_t, std::string_view> kTypeNames[] = {
    {kNullType, "null"},     {kBooleanType, "boolean"}, {kObjectType, "object"},
    {kArrayType, "array"},   {kNumberType, "number"},   {kIntegerType, "integer"},
    {kStringType, "string"},
};

}  // namespace

std::uint8_t TypesOf(const json::value& value) {
    switch (value.kind()) {
        case json::kind::null:
            return kNullType;
        case json::kind::bool_:
            return kBooleanType;
        case json::kind::object:
            return kObjectType;
        case json::kind::array:
            return kArrayType;
        case json::kind::string:
            return kStringType;
        default:
            return IsIntegral(value) ? kNumberType | kIntegerType : kNumberType;
    }
}

std::optional<std::uint8_t> TypeNamed(std::string_view name) {
    for (const auto& [bit, known] : kTypeNames) {
        if (name == known) return bit;
    }
    return std::nullopt;
}

std::string TypeNames(std::uint8_t types) {
    std::string names;
    for (const auto& [bit, name] : kTypeNames) {
        if ((types & bit) == 0) continue;
        names += names.empty() ? "" : " or ";
        names += name;
    }
    return names.empty() ? "any type (type is [])" : names;
}

std::string KindOf(const json::value& value) {
    switch (value.kind()) {
        case json::kind::null:
            return "null";
        case json::kind::bool_:
            return "a boolean";
        case json::kind::object:
            return "an object";
        case json::kind::array:
            return "an array";
        case json::kind::string:
            return "a string";
        default:
            return IsIntegral(value) ? "an integer" : "a number";
    }
}

int CompareNumbers(const json::value& a, const json::value& b) {
    const long double x = Exact(a);
    const long double y = Exact(b);
    return x < y ? -1 : (x > y ? 1 : 0);
}

bool IsIntegral(const json::value& value) {
    if (value.is_int64() || value.is_uint64()) return true;
    if (!value.is_double()) return false;
    const double d = value.get_double();
    return std::isfinite(d) && std::trunc(d) == d;
}

bool IsMultipleOf(const json::value& x, const json::value& divisor) {
    if (!x.is_double() && !divisor.is_double()) {
        // Both integers, the divisor positive: compare magnitudes in uint64 (|INT64_MIN| fits).
        const std::uint64_t d = divisor.is_uint64()
                                    ? divisor.get_uint64()
                                    : static_cast<std::uint64_t>(divisor.get_int64());
        const std::uint64_t n = x.is_uint64() ? x.get_uint64()
                                : x.get_int64() < 0
                                    ? std::uint64_t{0} - static_cast<std::uint64_t>(x.get_int64())
                                    : static_cast<std::uint64_t>(x.get_int64());
        return n % d == 0;
    }
    const double n = x.to_number<double>();
    const double d = divisor.to_number<double>();
    const double quotient = n / d;
    if (!std::isfinite(quotient)) return std::fmod(n, d) == 0;
    return std::abs(quotient - std::round(quotient)) <= 1e-12 * std::max(1.0, std::abs(quotient));
}

bool CanonicalWriter::Append(const json::value& value) { return AppendAt(value, 0); }

bool CanonicalWriter::AppendAt(const json::value& value, std::size_t depth) {
    if (depth > core::kMaxJsonDepth) return false;
    switch (value.kind()) {
        case json::kind::null:
            text_.push_back('z');
            break;
        case json::kind::bool_:
            text_.push_back(value.get_bool() ? 't' : 'f');
            break;
        case json::kind::string:
            if (!Fits(value.get_string().size())) return false;
            AppendString(value.get_string(), text_);
            break;
        case json::kind::array:
            if (!Fits(value.get_array().size())) return false;  // a byte or more per item
            text_.push_back('[');
            for (const json::value& item : value.get_array()) {
                if (!AppendAt(item, depth + 1)) return false;
            }
            text_.push_back(']');
            break;
        case json::kind::object:
            if (!AppendObject(value.get_object(), depth)) return false;
            break;
        default:
            AppendNumber(value, text_);
    }
    return Fits(0);
}

// Members in the order of their names (unique in a parsed object), so member order is no
// difference.
bool CanonicalWriter::AppendObject(const json::object& object, std::size_t depth) {
    std::size_t names = 0;
    for (const auto& member : object) names += member.key().size();
    if (!Fits(names + 3 * object.size())) return false;  // "s0:" and a byte of value, at least
    std::vector<const json::key_value_pair*> members;
    members.reserve(object.size());
    for (const auto& member : object) members.push_back(&member);
    std::sort(members.begin(), members.end(), [this](const auto* a, const auto* b) {
        compared_ += 1 + std::min(a->key().size(), b->key().size());
        return a->key() < b->key();
    });
    text_.push_back('{');
    for (const json::key_value_pair* member : members) {
        AppendString(member->key(), text_);
        if (!AppendAt(member->value(), depth + 1)) return false;
    }
    text_.push_back('}');
    return true;
}

std::size_t CodePoints(std::string_view text) {
    // Every code point has exactly one byte that is not a continuation byte (10xxxxxx).
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string ShortQuoted(std::string_view text) {
    std::string quoted = "\"";
    for (const char c : Cut(text)) {
        if (c == '"' || c == '\\') {
            quoted.push_back('\\');
            quoted.push_back(c);
        } else if (static_cast<unsigned char>(c) < 0x20) {
            constexpr char kHex[] = "0123456789abcdef";
            quoted.append("\\u00");
            quoted.push_back(kHex[(c >> 4) & 0xF]);
            quoted.push_back(kHex[c & 0xF]);
        } else {
            quoted.push_back(c);
        }
    }
    quoted.push_back('"');
    return quoted;
}

std::string ShortJson(const json::value& value) {
    if (!value.is_number()) return Cut(json::serialize(value));
    std::string text;
    AppendNumber(value, text);  // "n0.5;": Boost.JSON would write 5E-1
    return text.substr(1, text.size() - 2);
}

}  // namespace switchyard::answers
