#include "api/json_access.h"

#include <utility>

namespace switchyard::api {

namespace json = boost::json;

void Refuse(std::string message, std::string param) {
    core::LocalError error;
    error.kind = core::ErrorKind::kInvalidRequest;
    error.message = std::move(message);
    error.param = std::move(param);
    throw Refusal{std::move(error)};
}

const json::value* Find(const json::object& object, std::string_view key) {
    const json::value* value = object.if_contains(key);
    return value != nullptr && !value->is_null() ? value : nullptr;
}

const json::object* FindObject(const json::object& object, std::string_view key) {
    const json::value* value = Find(object, key);
    return value != nullptr ? value->if_object() : nullptr;
}

const json::array* FindArray(const json::object& object, std::string_view key) {
    const json::value* value = Find(object, key);
    return value != nullptr ? value->if_array() : nullptr;
}

std::string_view StringAt(const json::object& object, std::string_view key,
                          std::string_view fallback) {
    const json::value* value = Find(object, key);
    if (value == nullptr || !value->is_string()) {
        return fallback;
    }
    return value->get_string();
}

std::optional<double> NumberOf(const json::value& value) {
    if (value.is_int64()) {
        return static_cast<double>(value.get_int64());
    }
    if (value.is_uint64()) {
        return static_cast<double>(value.get_uint64());
    }
    if (value.is_double()) {
        return value.get_double();
    }
    return std::nullopt;
}

std::optional<std::int64_t> IntegerOf(const json::value& value) {
    if (value.is_int64()) {
        return value.get_int64();
    }
    if (value.is_uint64() && value.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
        return static_cast<std::int64_t>(value.get_uint64());
    }
    if (value.is_double()) {
        const double number = value.get_double();
        if (number > -9.0e18 && number < 9.0e18 &&
            number == static_cast<double>(static_cast<std::int64_t>(number))) {
            return static_cast<std::int64_t>(number);
        }
    }
    return std::nullopt;
}

std::int64_t IntegerAt(const json::object& object, std::string_view key) {
    const json::value* value = Find(object, key);
    if (value == nullptr) {
        return 0;
    }
    return IntegerOf(*value).value_or(0);
}

std::string Quoted(std::string_view name) { return "`" + std::string(name) + "`"; }

}  // namespace switchyard::api
