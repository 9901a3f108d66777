#include "structured_output.h"

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace switchyard::mock {
namespace {

namespace json = boost::json;

constexpr int kMaxDepth = 16;
constexpr int kMaxValues = 10'000;

// Samples of the string formats clients check most often (JSON Schema 2020-12, section 7.3).
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kFormatSamples = {{
    {"date-time", "2024-01-01T00:00:00Z"},
    {"date", "2024-01-01"},
    {"time", "00:00:00Z"},
    {"email", "user@example.com"},
    {"uri", "https://example.com/"},
    {"url", "https://example.com/"},
    {"uuid", "00000000-0000-4000-8000-000000000000"},
    {"ipv4", "192.0.2.1"},
    {"ipv6", "2001:db8::1"},
    {"hostname", "example.com"},
}};

const json::value* Field(const json::object& schema, std::string_view name) {
    return schema.if_contains(name);
}

std::optional<double> NumberField(const json::object& schema, std::string_view name) {
    const json::value* value = Field(schema, name);
    if (value == nullptr || !value->is_number()) return std::nullopt;
    return value->to_number<double>();
}

bool IsNullSchema(const json::value& schema) {
    const json::object* object = schema.if_object();
    if (object == nullptr) return false;
    const json::value* type = Field(*object, "type");
    return type != nullptr && type->is_string() && type->get_string() == "null";
}

std::string_view TypeOf(const json::object& schema) {
    const json::value* type = Field(schema, "type");
    if (type == nullptr) return schema.contains("properties") ? "object" : "string";
    if (type->is_string()) return type->get_string();
    if (const json::array* types = type->if_array()) {
        // A nullable type list (["string","null"]): the value is more useful than null.
        for (const json::value& name : *types) {
            if (name.is_string() && name.get_string() != "null") return name.get_string();
        }
        if (!types->empty() && types->front().is_string()) return types->front().get_string();
    }
    return "string";
}

// The schema a subschema stands for: itself, or the choice the generator makes among its
// alternatives, or the target of its local $ref. nullptr when there is nothing to follow.
const json::value* Alternative(const json::object& schema, const json::value& root) {
    for (const char* any : {"anyOf", "oneOf"}) {
        const json::value* options = Field(schema, any);
        if (options == nullptr || !options->is_array() || options->get_array().empty()) continue;
        const json::array& choices = options->get_array();
        const auto useful = std::find_if(choices.begin(), choices.end(),
                                         [](const json::value& c) { return !IsNullSchema(c); });
        return useful != choices.end() ? &*useful : &choices.front();
    }
    if (const json::value* all = Field(schema, "allOf");
        all != nullptr && all->is_array() && !all->get_array().empty()) {
        return &all->get_array().front();
    }
    if (const json::value* ref = Field(schema, "$ref"); ref != nullptr && ref->is_string()) {
        const std::string_view target = ref->get_string();
        if (!target.starts_with("#")) return nullptr;  // Remote references are not fetched.
        boost::system::error_code ec;
        return root.find_pointer(target.substr(1), ec);
    }
    return nullptr;
}

class Generator final {
  public:
    Generator(const json::value& root, SchemaFill fill) : root_(root), fill_(fill) {}

    json::value Example(const json::value& schema_value, int depth) {
        const json::object* schema = schema_value.if_object();
        if (schema == nullptr || depth > kMaxDepth || values_ >= kMaxValues) return nullptr;
        ++values_;
        if (const json::value* constant = Field(*schema, "const")) return *constant;
        if (const json::value* choices = Field(*schema, "enum");
            choices != nullptr && choices->is_array() && !choices->get_array().empty()) {
            return choices->get_array()[0];
        }
        if (const json::value* other = Alternative(*schema, root_)) {
            return Example(*other, depth + 1);
        }
        const std::string_view type = TypeOf(*schema);
        if (type == "object") return Object(*schema, depth);
        if (type == "array") return Array(*schema, depth);
        if (type == "integer") return Integer(*schema);
        if (type == "number") return Number(*schema);
        if (type == "boolean") return true;
        if (type == "null") return nullptr;
        return String(*schema);
    }

  private:
    bool Wanted(const json::object& schema, std::string_view name) const {
        if (fill_ == SchemaFill::kStructuredOutput) return true;
        const json::value* required = Field(schema, "required");
        if (required == nullptr || !required->is_array()) return true;
        const json::array& names = required->get_array();
        return std::find(names.begin(), names.end(), json::value(name)) != names.end();
    }

    json::value Object(const json::object& schema, int depth) {
        json::object out;
        const json::value* properties_value = Field(schema, "properties");
        const json::object* properties =
            properties_value != nullptr ? properties_value->if_object() : nullptr;
        if (properties != nullptr) {
            for (const auto& [name, property] : *properties) {
                if (Wanted(schema, name)) out[name] = Example(property, depth + 1);
            }
        }
        // A required name without a schema of its own may hold anything; a string will do.
        if (const json::value* required = Field(schema, "required");
            required != nullptr && required->is_array()) {
            for (const json::value& name : required->get_array()) {
                if (name.is_string() && !out.contains(name.get_string())) {
                    out[name.get_string()] = Example(json::object(), depth + 1);
                }
            }
        }
        return out;
    }

    json::value Array(const json::object& schema, int depth) {
        json::array out;
        if (const json::value* prefix = Field(schema, "prefixItems");
            prefix != nullptr && prefix->is_array()) {
            for (const json::value& item : prefix->get_array()) {
                out.push_back(Example(item, depth + 1));
            }
            return out;
        }
        const json::value* items = Field(schema, "items");
        if (items == nullptr) return out;
        const double min_items = NumberField(schema, "minItems").value_or(1);
        const int count = static_cast<int>(std::clamp(min_items, 1.0, double{kMaxValues}));
        for (int i = 0; i < count && values_ < kMaxValues; ++i) {
            out.push_back(Example(*items, depth + 1));
        }
        return out;
    }

    json::value Integer(const json::object& schema) const {
        double value = 1;
        if (const auto minimum = NumberField(schema, "minimum")) {
            value = std::ceil(*minimum);
        } else if (const auto above = NumberField(schema, "exclusiveMinimum")) {
            value = std::floor(*above) + 1;
        } else {
            if (const auto maximum = NumberField(schema, "maximum"); maximum && *maximum < value) {
                value = std::floor(*maximum);
            }
            if (const auto below = NumberField(schema, "exclusiveMaximum");
                below && *below <= value) {
                value = std::ceil(*below) - 1;
            }
        }
        return static_cast<std::int64_t>(value);
    }

    json::value Number(const json::object& schema) const {
        if (const json::value* minimum = Field(schema, "minimum");
            minimum != nullptr && minimum->is_number()) {
            return *minimum;
        }
        double value = fill_ == SchemaFill::kStructuredOutput ? 1.5 : 1;
        if (const auto above = NumberField(schema, "exclusiveMinimum")) {
            value = *above + 1;
        } else {
            if (const auto maximum = NumberField(schema, "maximum"); maximum && *maximum < value) {
                value = *maximum;
            }
            if (const auto below = NumberField(schema, "exclusiveMaximum");
                below && *below <= value) {
                value = *below - 1;
            }
        }
        // A whole number is written as an integer: `1`, not `1E0`.
        if (value == std::trunc(value) && std::abs(value) < 1e15) {
            return static_cast<std::int64_t>(value);
        }
        return value;
    }

    json::value String(const json::object& schema) const {
        std::string_view sample = fill_ == SchemaFill::kStructuredOutput ? "text" : "value";
        if (const json::value* format = Field(schema, "format");
            format != nullptr && format->is_string()) {
            for (const auto& [name, text] : kFormatSamples) {
                if (format->get_string() == name) sample = text;
            }
        }
        std::string text(sample);
        const double min_length = NumberField(schema, "minLength").value_or(0);
        const auto wanted = static_cast<std::size_t>(std::clamp(min_length, 0.0, 1e6));
        if (text.size() < wanted) {
            while (text.size() < wanted) text += sample;
            text.resize(wanted);
        }
        if (const auto max_length = NumberField(schema, "maxLength");
            max_length && *max_length >= 0 && *max_length < static_cast<double>(text.size())) {
            text.resize(static_cast<std::size_t>(*max_length));
        }
        return json::string(text);
    }

    const json::value& root_;
    SchemaFill fill_;
    int values_ = 0;
};

}  // namespace

json::value SchemaExample(const json::value& schema, SchemaFill fill) {
    return Generator(schema, fill).Example(schema, 0);
}

std::string StructuredReply(const json::value& schema, bool invalid) {
    if (!invalid) return json::serialize(SchemaExample(schema, SchemaFill::kStructuredOutput));
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

std::string ToolArguments(const json::value* schema) {
    if (schema == nullptr) return "{}";
    const json::value arguments = SchemaExample(*schema, SchemaFill::kToolArguments);
    if (!arguments.is_object()) return "{}";
    return json::serialize(arguments);
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
