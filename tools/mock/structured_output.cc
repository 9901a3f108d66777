#include "structured_output.h"

#include <boost/json.hpp>

namespace switchyard::mock {
namespace {

namespace json = boost::json;

std::string_view TypeOf(const json::object& schema) {
    const json::value* type = schema.if_contains("type");
    if (type == nullptr) return schema.contains("properties") ? "object" : "string";
    if (type->is_string()) return type->get_string();
    if (type->is_array() && !type->get_array().empty() && type->get_array()[0].is_string()) {
        return type->get_array()[0].get_string();
    }
    return "string";
}

json::value Example(const json::value& schema_value, int depth) {
    const json::object* schema = schema_value.if_object();
    if (schema == nullptr || depth > 16) return nullptr;
    if (const json::value* constant = schema->if_contains("const")) return *constant;
    if (const json::value* choices = schema->if_contains("enum");
        choices != nullptr && choices->is_array() && !choices->get_array().empty()) {
        return choices->get_array()[0];
    }
    for (const char* any : {"anyOf", "oneOf"}) {
        if (const json::value* options = schema->if_contains(any);
            options != nullptr && options->is_array() && !options->get_array().empty()) {
            return Example(options->get_array()[0], depth + 1);
        }
    }
    const std::string_view type = TypeOf(*schema);
    if (type == "object") {
        json::object out;
        if (const json::value* properties = schema->if_contains("properties");
            properties != nullptr && properties->is_object()) {
            for (const auto& [name, property] : properties->get_object()) {
                out[name] = Example(property, depth + 1);
            }
        }
        return out;
    }
    if (type == "array") {
        json::array out;
        if (const json::value* items = schema->if_contains("items")) {
            out.push_back(Example(*items, depth + 1));
        }
        return out;
    }
    if (type == "integer") return 1;
    if (type == "number") return 1.5;
    if (type == "boolean") return true;
    if (type == "null") return nullptr;
    return "text";
}

}  // namespace

std::string StructuredReply(const json::value& schema, bool invalid) {
    if (!invalid) return json::serialize(Example(schema, 0));
    const json::object* object = schema.if_object();
    const std::string_view type = object != nullptr ? TypeOf(*object) : "string";
    if (type == "object") {
        // Without its required properties; a schema that requires none gets a string instead.
        const json::value* required = object->if_contains("required");
        if (required != nullptr && required->is_array() && !required->get_array().empty()) {
            return "{}";
        }
        return "\"not an object\"";
    }
    return type == "string" ? "12345" : "\"not valid\"";
}

std::string OutputSchemaOf(const json::object& request) {
    const json::object* format = nullptr;
    const char* holder = "json_schema";
    if (const json::value* response_format = request.if_contains("response_format")) {
        format = response_format->if_object();
    } else if (const json::value* config = request.if_contains("output_config");
               config != nullptr && config->is_object()) {
        if (const json::value* inner = config->get_object().if_contains("format")) {
            format = inner->if_object();
            holder = nullptr;
        }
    }
    if (format == nullptr) return {};
    const json::value* type = format->if_contains("type");
    if (type == nullptr || *type != "json_schema") return {};
    const json::object* owner = format;
    if (holder != nullptr) {
        const json::value* nested = format->if_contains(holder);
        owner = nested != nullptr ? nested->if_object() : nullptr;
    }
    if (owner == nullptr) return {};
    const json::value* schema = owner->if_contains("schema");
    if (schema == nullptr || !schema->is_object()) return {};
    return json::serialize(*schema);
}

}  // namespace switchyard::mock
