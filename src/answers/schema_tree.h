#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "answers/json_values.h"
#include "answers/schema_pattern.h"

namespace switchyard::answers {

// The compiled form of a JSON Schema (json_schema.h): written once by CompileSchemaTree
// (schema_compiler.h), then only read by ValidateDocument (schema_validator.h). Schemas refer to
// each other by index, so a `$ref` cycle through `items` or `properties` is just an index.

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = ~NodeId{0};

// `enum` or `const`: the allowed values in canonical form (json_values.h), sorted.
struct ValueSet {
    std::vector<std::string> canonical;
    std::size_t longest = 0;  // bytes of the longest canonical form: a longer value matches none
    std::string shown;        // the keyword's value for messages, cut short
};

struct ValueRules {
    std::optional<ValueSet> enumeration;
    std::optional<ValueSet> constant;
};

// Bounds are kept as the schema wrote them (int64, uint64 or double) and compared exactly.
struct NumberRules {
    std::optional<boost::json::value> multiple_of;
    std::optional<boost::json::value> maximum;
    std::optional<boost::json::value> exclusive_maximum;
    std::optional<boost::json::value> minimum;
    std::optional<boost::json::value> exclusive_minimum;
};

enum class Format : std::uint8_t { kAny, kDate, kTime, kDateTime };

struct StringRules {
    std::optional<std::size_t> min_length;  // in Unicode code points
    std::optional<std::size_t> max_length;
    const SchemaPattern* pattern = nullptr;  // owned by the tree
    Format format = Format::kAny;
};

struct ArrayRules {
    NodeId items = kNoNode;  // `items` as one schema for every item
    // `items` as an array: one schema per position, and `additionalItems` for the items past them
    // (it applies to nothing else).
    bool tuple_form = false;
    std::vector<NodeId> tuple;
    NodeId additional = kNoNode;
    std::optional<std::size_t> min_items;
    std::optional<std::size_t> max_items;
    bool unique = false;
    NodeId contains = kNoNode;
};

struct PatternProperty {
    const SchemaPattern* pattern = nullptr;
    NodeId schema = kNoNode;
};

// `dependencies`: when `name` is present, the names in `required` are too, and (schema form) the
// object matches `schema`.
struct Dependency {
    std::string name;
    std::vector<std::string> required;
    NodeId schema = kNoNode;
};

struct ObjectRules {
    std::optional<std::size_t> min_properties;
    std::optional<std::size_t> max_properties;
    std::vector<std::string> required;
    std::vector<std::pair<std::string, NodeId>> properties;  // sorted by name
    std::vector<PatternProperty> pattern_properties;
    NodeId additional = kNoNode;
    std::vector<Dependency> dependencies;  // sorted by name
    NodeId property_names = kNoNode;
};

// The keywords that apply other schemas to the same value.
struct Combinators {
    std::vector<NodeId> all_of;
    std::vector<NodeId> any_of;
    std::vector<NodeId> one_of;
    NodeId negated = kNoNode;  // `not`
    NodeId if_schema = kNoNode;
    NodeId then_schema = kNoNode;
    NodeId else_schema = kNoNode;
};

struct SchemaNode {
    enum class Kind : std::uint8_t {
        kTrue,   // `true` or `{}`
        kFalse,  // `false`
        kRef,    // `{"$ref": ...}`: `ref` alone applies (draft 7 ignores the keywords beside it)
        kRules,  // keywords
    };
    Kind kind = Kind::kTrue;
    std::uint8_t types = kAnyType;  // TypeBit
    NodeId ref = kNoNode;
    // Absent groups have no keyword in this schema.
    std::unique_ptr<const ValueRules> values;
    std::unique_ptr<const NumberRules> numbers;
    std::unique_ptr<const StringRules> strings;
    std::unique_ptr<const ArrayRules> arrays;
    std::unique_ptr<const ObjectRules> objects;
    std::unique_ptr<const Combinators> combinators;
};

struct SchemaTree {
    std::vector<SchemaNode> nodes;  // nodes[0] is the root
    std::vector<std::unique_ptr<const SchemaPattern>> patterns;
};

}  // namespace switchyard::answers
