#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"

namespace switchyard::api {

// Small helpers shared by the translation files (translate_*.cc): lenient reads of a parsed JSON
// document, and the refusal a translator throws when something cannot be carried over. None
// allocates except Refuse and Quoted; none throws except Refuse.

// Thrown by a translator for what the other API cannot express; each public translation function
// catches it and returns it (or, in a stream, emits its error event). Never escapes src/api.
struct Refusal {
    core::LocalError error;
};

// Throws Refusal{LocalError{kInvalidRequest, message, param}}.
[[noreturn]] void Refuse(std::string message, std::string param);

// The member `key` when it is present and not null, else nullptr.
const boost::json::value* Find(const boost::json::object& object, std::string_view key);

// The member `key` when it is an object, else nullptr.
const boost::json::object* FindObject(const boost::json::object& object, std::string_view key);

// The member `key` when it is an array, else nullptr.
const boost::json::array* FindArray(const boost::json::object& object, std::string_view key);

// The member `key` when it is a string (a view into `object`), else `fallback`.
std::string_view StringAt(const boost::json::object& object, std::string_view key,
                          std::string_view fallback = {});

// Any JSON number as a double; nullopt for anything else.
std::optional<double> NumberOf(const boost::json::value& value);

// A JSON number with an exact int64 value (also a whole double); nullopt for anything else.
std::optional<std::int64_t> IntegerOf(const boost::json::value& value);

// IntegerOf the member `key`; 0 when it is missing, null or not an integer.
std::int64_t IntegerAt(const boost::json::object& object, std::string_view key);

// `name` in backticks, for messages that name a parameter or type.
std::string Quoted(std::string_view name);

}  // namespace switchyard::api
