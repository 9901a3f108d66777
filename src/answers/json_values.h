#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace switchyard::answers {

// Facts about JSON values as JSON Schema compares them: numbers by value whatever their
// representation (int64, uint64, double), object members in any order. Pure.

// `type`: one bit per JSON Schema type. An integral number has both kNumberType and kIntegerType.
enum TypeBit : std::uint8_t {
    kNullType = 1 << 0,
    kBooleanType = 1 << 1,
    kObjectType = 1 << 2,
    kArrayType = 1 << 3,
    kNumberType = 1 << 4,
    kIntegerType = 1 << 5,
    kStringType = 1 << 6,
};
inline constexpr std::uint8_t kAnyType = 0x7f;

// The types `value` is an instance of: one bit, or kNumberType | kIntegerType.
std::uint8_t TypesOf(const boost::json::value& value);
// The bit of a type name ("integer"); nullopt for a name that is no JSON Schema type.
std::optional<std::uint8_t> TypeNamed(std::string_view name);
// For messages: the names of `types` ("null or string"), and what `value` is ("an integer").
std::string TypeNames(std::uint8_t types);
std::string KindOf(const boost::json::value& value);

// Negative, zero or positive as number `a` is less than, equal to or greater than number `b`,
// exactly (9007199254740993 is greater than 9007199254740992.0).
int CompareNumbers(const boost::json::value& a, const boost::json::value& b);

// Whether `value` is a number with no fractional part: JSON Schema's integer, 1.0 included.
bool IsIntegral(const boost::json::value& value);

// Whether number `x` is an integer multiple of `divisor` (> 0): exact when both are integers;
// otherwise the quotient is taken in double and may be off by its rounding (0.3 is a multiple of
// 0.1, as a reader expects), by one part in 10^12 at most.
bool IsMultipleOf(const boost::json::value& x, const boost::json::value& divisor);

// Writes canonical forms of values into one buffer: two values have the same form exactly when
// they are equal as JSON Schema's `enum`, `const` and `uniqueItems` compare them. Counts its work
// — bytes written, plus bytes compared while sorting object members — so a caller can charge for
// it. The bytes written are capped; the sorting is bounded by them (an object is only sorted when
// its names fit), at most a log factor more.
class CanonicalWriter final {
  public:
    explicit CanonicalWriter(std::size_t max_bytes) : max_bytes_(max_bytes) {}

    // Appends `value`'s form to text(). False, with a partial form there, once text() would pass
    // `max_bytes` or the value nests deeper than core::kMaxJsonDepth.
    bool Append(const boost::json::value& value);

    const std::string& text() const { return text_; }
    std::size_t work() const { return text_.size() + compared_; }

  private:
    bool AppendAt(const boost::json::value& value, std::size_t depth);
    bool AppendObject(const boost::json::object& object, std::size_t depth);
    bool Fits(std::size_t more) const { return text_.size() + more <= max_bytes_; }

    std::string text_;
    std::size_t compared_ = 0;
    std::size_t max_bytes_;
};

// Unicode code points in UTF-8 `text`: JSON Schema's string length.
std::size_t CodePoints(std::string_view text);

// For messages: `text` as a JSON string, or `value` serialized, cut short at a character boundary
// (a trailing "…" says so).
std::string ShortQuoted(std::string_view text);
std::string ShortJson(const boost::json::value& value);

}  // namespace switchyard::answers
