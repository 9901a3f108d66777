#include "answers/schema_compiler.h"

#include <algorithm>
#include <boost/json.hpp>
#include <initializer_list>
#include <limits>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "answers/json_values.h"
#include "core/json.h"

namespace switchyard::answers {
namespace {

namespace json = boost::json;

// How many schemas may apply, one inside the other, to the same value (allOf, anyOf, oneOf, not,
// if/then/else, schema dependencies and $ref do not descend into it).
constexpr int kMaxInPlaceDepth = 256;

// Distinct patterns per schema: each may hold SchemaPattern::kMemoryBytes, so 32 MiB at most.
constexpr std::size_t kMaxPatterns = 128;

// Thrown inside the compiler only, caught in CompileSchemaTree: a refusal can come from any depth
// of the schema, and nothing half-built outlives it.
struct Refusal {
    std::string why;
};

class Compiler {
  public:
    explicit Compiler(const json::value& root) : root_(root) {}

    SchemaTree Run() {
        if (!root_.is_object() && !root_.is_bool()) {
            throw Refusal{"the schema is not a JSON object"};
        }
        Compile(root_, 0);
        // References are compiled here rather than where they stand, so a long chain of them
        // needs no deeper recursion than the schema's own nesting.
        while (!pending_.empty()) {
            auto [id, target, where] = std::move(pending_.back());
            pending_.pop_back();
            location_ = std::move(where);
            const NodeId resolved = Compile(*target, 0);
            tree_.nodes[id].ref = resolved;
        }
        CheckInPlaceChains();
        return std::move(tree_);
    }

  private:
    struct PendingRef {
        NodeId id;
        const json::value* target;
        std::string where;
    };

    [[noreturn]] void Refuse(const std::string& why) const {
        throw Refusal{location_ + ": " + why};
    }

    NodeId Compile(const json::value& schema, std::size_t depth) {
        if (depth > core::kMaxJsonDepth) {
            Refuse("schemas nest deeper than " + std::to_string(core::kMaxJsonDepth));
        }
        const auto [it, fresh] = ids_.try_emplace(&schema, static_cast<NodeId>(tree_.nodes.size()));
        const NodeId id = it->second;
        if (!fresh) return id;  // reached again through a $ref: one node
        tree_.nodes.emplace_back();
        if (schema.is_bool()) {
            tree_.nodes[id].kind =
                schema.get_bool() ? SchemaNode::Kind::kTrue : SchemaNode::Kind::kFalse;
            return id;
        }
        const json::object* object = schema.if_object();
        if (object == nullptr) Refuse("a schema is neither an object nor a boolean");
        // `$id` moves the base that references resolve against; only the root's is harmless.
        if (&schema != &root_ && object->contains("$id")) {
            Refuse("$id is only supported at the root");
        }
        for (const char* key : {"definitions", "$defs"}) CompileDefinitions(*object, key, depth);
        if (const json::value* ref = object->if_contains("$ref")) {
            tree_.nodes[id].kind = SchemaNode::Kind::kRef;
            const std::string_view target = Target(*ref);
            pending_.push_back({id, Resolve(target), "#" + std::string(target)});
            return id;
        }
        SchemaNode node = Build(*object, depth);
        tree_.nodes[id] = std::move(node);
        return id;
    }

    // Definitions are compiled even when nothing refers to them, so a schema that could recurse
    // without end is refused wherever it stands.
    void CompileDefinitions(const json::object& schema, std::string_view key, std::size_t depth) {
        const json::value* definitions = schema.if_contains(key);
        if (definitions == nullptr) return;
        if (!definitions->is_object()) Refuse(std::string(key) + " is not an object");
        for (const auto& member : definitions->get_object()) {
            Child(member.value(), {key, member.key()}, depth + 2);
        }
    }

    // The JSON pointer of a local `$ref` ("" for "#").
    std::string_view Target(const json::value& ref) const {
        if (!ref.is_string()) Refuse("$ref is not a string");
        std::string_view target = ref.get_string();
        if (!target.starts_with('#')) {
            Refuse("$ref " + ShortQuoted(target) +
                   " leaves the schema (only \"#...\" is followed)");
        }
        target.remove_prefix(1);
        if (!target.empty() && !target.starts_with('/')) {
            Refuse("$ref " + ShortQuoted(target) + " is not a JSON pointer");
        }
        return target;
    }

    const json::value* Resolve(std::string_view pointer) const {
        if (pointer.empty()) return &root_;
        boost::system::error_code ec;
        const json::value* found = root_.find_pointer(pointer, ec);
        if (found == nullptr) {
            Refuse("$ref " + ShortQuoted("#" + std::string(pointer)) + " names nothing");
        }
        return found;
    }

    // Compiles the schema `value`, found below the current location at `segments`.
    NodeId Child(const json::value& value, std::initializer_list<std::string_view> segments,
                 std::size_t depth) {
        const std::size_t mark = location_.size();
        for (std::string_view segment : segments) {
            location_.push_back('/');
            for (const char c : segment) {  // RFC 6901 escapes
                if (c == '~') {
                    location_.append("~0");
                } else if (c == '/') {
                    location_.append("~1");
                } else {
                    location_.push_back(c);
                }
            }
        }
        const NodeId id = Compile(value, depth);
        location_.resize(mark);
        return id;
    }

    NodeId ChildOf(const json::object& schema, std::string_view key, std::size_t depth) {
        const json::value* value = schema.if_contains(key);
        return value == nullptr ? kNoNode : Child(*value, {key}, depth + 1);
    }

    std::vector<NodeId> ListOf(const json::object& schema, std::string_view key,
                               std::size_t depth) {
        const json::value* value = schema.if_contains(key);
        if (value == nullptr) return {};
        if (!value->is_array() || value->get_array().empty()) {
            Refuse(std::string(key) + " is not a non-empty array of schemas");
        }
        std::vector<NodeId> ids;
        const json::array& list = value->get_array();
        for (std::size_t i = 0; i < list.size(); ++i) {
            ids.push_back(Child(list[i], {key, std::to_string(i)}, depth + 2));
        }
        return ids;
    }

    std::optional<std::size_t> CountOf(const json::object& schema, std::string_view key) const {
        const json::value* value = schema.if_contains(key);
        if (value == nullptr) return std::nullopt;
        if (!IsIntegral(*value) || CompareNumbers(*value, json::value(0)) < 0) {
            Refuse(std::string(key) + " is not a non-negative integer");
        }
        if (value->is_int64()) return static_cast<std::size_t>(value->get_int64());
        if (value->is_uint64()) return value->get_uint64();
        const double count = value->get_double();
        return count >= 1.8e19 ? std::numeric_limits<std::size_t>::max()
                               : static_cast<std::size_t>(count);
    }

    std::optional<json::value> NumberOf(const json::object& schema, std::string_view key) const {
        const json::value* value = schema.if_contains(key);
        if (value == nullptr) return std::nullopt;
        if (!value->is_number()) Refuse(std::string(key) + " is not a number");
        return *value;
    }

    SchemaNode Build(const json::object& schema, std::size_t depth) {
        SchemaNode node;
        node.kind = SchemaNode::Kind::kRules;
        if (const json::value* type = schema.if_contains("type")) node.types = TypesOf(*type);
        node.values = ValuesOf(schema);
        node.numbers = NumbersOf(schema);
        node.strings = StringsOf(schema);
        node.arrays = ArraysOf(schema, depth);
        node.objects = ObjectsOf(schema, depth);
        node.combinators = CombinatorsOf(schema, depth);
        if (node.types == kAnyType && !node.values && !node.numbers && !node.strings &&
            !node.arrays && !node.objects && !node.combinators) {
            node.kind = SchemaNode::Kind::kTrue;  // only annotations: `{}`
        }
        return node;
    }

    std::uint8_t TypesOf(const json::value& type) const {
        if (type.is_string()) return TypeNamed(type.get_string());
        if (!type.is_array()) Refuse("type is neither a type name nor an array of them");
        std::uint8_t types = 0;
        for (const json::value& name : type.get_array()) {
            if (!name.is_string()) Refuse("type lists something that is not a type name");
            types |= TypeNamed(name.get_string());
        }
        return types;
    }

    std::uint8_t TypeNamed(std::string_view name) const {
        const std::optional<std::uint8_t> bit = answers::TypeNamed(name);
        if (!bit) Refuse("type " + ShortQuoted(name) + " is no JSON Schema type");
        return *bit;
    }

    ValueSet SetOf(std::span<const json::value> values, const json::value& shown) const {
        ValueSet set;
        for (const json::value& value : values) {
            CanonicalWriter form(std::numeric_limits<std::size_t>::max());
            if (!form.Append(value)) Refuse("a value of enum or const nests too deep");
            set.longest = std::max(set.longest, form.text().size());
            set.canonical.push_back(form.text());
        }
        std::sort(set.canonical.begin(), set.canonical.end());
        set.canonical.erase(std::unique(set.canonical.begin(), set.canonical.end()),
                            set.canonical.end());
        set.shown = ShortJson(shown);
        return set;
    }

    std::unique_ptr<const ValueRules> ValuesOf(const json::object& schema) const {
        const json::value* enumeration = schema.if_contains("enum");
        const json::value* constant = schema.if_contains("const");
        if (enumeration == nullptr && constant == nullptr) return nullptr;
        auto rules = std::make_unique<ValueRules>();
        if (enumeration != nullptr) {
            if (!enumeration->is_array()) Refuse("enum is not an array");
            const json::array& values = enumeration->get_array();
            rules->enumeration = SetOf({values.data(), values.size()}, *enumeration);
        }
        if (constant != nullptr) rules->constant = SetOf({constant, 1}, *constant);
        return rules;
    }

    // exclusiveMaximum/exclusiveMinimum: a number (draft 6 on), or draft 4's boolean that makes
    // maximum/minimum exclusive.
    void ExclusiveBound(const json::object& schema, std::string_view key,
                        std::optional<json::value>& inclusive,
                        std::optional<json::value>& exclusive) const {
        const json::value* value = schema.if_contains(key);
        if (value == nullptr) return;
        if (value->is_bool()) {
            if (value->get_bool()) std::swap(inclusive, exclusive);
            return;
        }
        if (!value->is_number()) Refuse(std::string(key) + " is neither a number nor a boolean");
        exclusive = *value;
    }

    std::unique_ptr<const NumberRules> NumbersOf(const json::object& schema) const {
        auto rules = std::make_unique<NumberRules>();
        rules->multiple_of = NumberOf(schema, "multipleOf");
        if (rules->multiple_of && CompareNumbers(*rules->multiple_of, json::value(0)) <= 0) {
            Refuse("multipleOf is not greater than 0");
        }
        rules->maximum = NumberOf(schema, "maximum");
        rules->minimum = NumberOf(schema, "minimum");
        ExclusiveBound(schema, "exclusiveMaximum", rules->maximum, rules->exclusive_maximum);
        ExclusiveBound(schema, "exclusiveMinimum", rules->minimum, rules->exclusive_minimum);
        if (!rules->multiple_of && !rules->maximum && !rules->minimum &&
            !rules->exclusive_maximum && !rules->exclusive_minimum) {
            return nullptr;
        }
        return rules;
    }

    const SchemaPattern* PatternOf(std::string_view source) {
        std::string key(source);
        if (const auto found = patterns_.find(key); found != patterns_.end()) return found->second;
        if (tree_.patterns.size() >= kMaxPatterns) {
            Refuse("more than " + std::to_string(kMaxPatterns) + " different patterns");
        }
        auto compiled = SchemaPattern::Compile(source);
        if (const std::string* why = std::get_if<std::string>(&compiled)) Refuse(*why);
        tree_.patterns.push_back(std::move(std::get<0>(compiled)));
        const SchemaPattern* pattern = tree_.patterns.back().get();
        patterns_.emplace(std::move(key), pattern);
        return pattern;
    }

    std::unique_ptr<const StringRules> StringsOf(const json::object& schema) {
        auto rules = std::make_unique<StringRules>();
        rules->min_length = CountOf(schema, "minLength");
        rules->max_length = CountOf(schema, "maxLength");
        if (const json::value* pattern = schema.if_contains("pattern")) {
            if (!pattern->is_string()) Refuse("pattern is not a string");
            rules->pattern = PatternOf(pattern->get_string());
        }
        if (const json::value* format = schema.if_contains("format")) {
            if (!format->is_string()) Refuse("format is not a string");
            const std::string_view name = format->get_string();
            rules->format = name == "date"        ? Format::kDate
                            : name == "time"      ? Format::kTime
                            : name == "date-time" ? Format::kDateTime
                                                  : Format::kAny;
        }
        if (!rules->min_length && !rules->max_length && rules->pattern == nullptr &&
            rules->format == Format::kAny) {
            return nullptr;
        }
        return rules;
    }

    std::unique_ptr<const ArrayRules> ArraysOf(const json::object& schema, std::size_t depth) {
        auto rules = std::make_unique<ArrayRules>();
        bool any = false;
        if (const json::value* items = schema.if_contains("items")) {
            any = true;
            if (const json::array* tuple = items->if_array()) {
                rules->tuple_form = true;
                for (std::size_t i = 0; i < tuple->size(); ++i) {
                    rules->tuple.push_back(
                        Child((*tuple)[i], {"items", std::to_string(i)}, depth + 2));
                }
                rules->additional = ChildOf(schema, "additionalItems", depth);
            } else {
                rules->items = Child(*items, {"items"}, depth + 1);
            }
        }
        rules->min_items = CountOf(schema, "minItems");
        rules->max_items = CountOf(schema, "maxItems");
        if (const json::value* unique = schema.if_contains("uniqueItems")) {
            if (!unique->is_bool()) Refuse("uniqueItems is not a boolean");
            rules->unique = unique->get_bool();
        }
        rules->contains = ChildOf(schema, "contains", depth);
        any = any || rules->min_items || rules->max_items || rules->unique ||
              rules->contains != kNoNode;
        return any ? std::move(rules) : nullptr;
    }

    std::unique_ptr<const ObjectRules> ObjectsOf(const json::object& schema, std::size_t depth) {
        auto rules = std::make_unique<ObjectRules>();
        rules->min_properties = CountOf(schema, "minProperties");
        rules->max_properties = CountOf(schema, "maxProperties");
        if (const json::value* required = schema.if_contains("required")) {
            rules->required = NamesOf(*required, "required");
        }
        for (const auto& [name, value] : MembersOf(schema, "properties")) {
            rules->properties.emplace_back(name, Child(*value, {"properties", name}, depth + 2));
        }
        std::sort(rules->properties.begin(), rules->properties.end());
        for (const auto& [name, value] : MembersOf(schema, "patternProperties")) {
            const NodeId id = Child(*value, {"patternProperties", name}, depth + 2);
            rules->pattern_properties.push_back({PatternOf(name), id});
        }
        rules->additional = ChildOf(schema, "additionalProperties", depth);
        for (const auto& [name, value] : MembersOf(schema, "dependencies")) {
            Dependency dependency{std::string(name), {}, kNoNode};
            if (value->is_array()) {
                dependency.required = NamesOf(*value, "dependencies");
            } else {
                dependency.schema = Child(*value, {"dependencies", name}, depth + 2);
            }
            rules->dependencies.push_back(std::move(dependency));
        }
        std::sort(rules->dependencies.begin(), rules->dependencies.end(),
                  [](const Dependency& a, const Dependency& b) { return a.name < b.name; });
        rules->property_names = ChildOf(schema, "propertyNames", depth);
        const bool any = rules->min_properties || rules->max_properties ||
                         !rules->required.empty() || !rules->properties.empty() ||
                         !rules->pattern_properties.empty() || rules->additional != kNoNode ||
                         !rules->dependencies.empty() || rules->property_names != kNoNode;
        return any ? std::move(rules) : nullptr;
    }

    std::vector<std::pair<std::string_view, const json::value*>> MembersOf(
        const json::object& schema, std::string_view key) const {
        const json::value* value = schema.if_contains(key);
        if (value == nullptr) return {};
        if (!value->is_object()) Refuse(std::string(key) + " is not an object");
        std::vector<std::pair<std::string_view, const json::value*>> members;
        for (const auto& member : value->get_object()) {
            members.emplace_back(member.key(), &member.value());
        }
        return members;
    }

    std::vector<std::string> NamesOf(const json::value& value, std::string_view key) const {
        if (!value.is_array()) Refuse(std::string(key) + " is not an array of names");
        std::vector<std::string> names;
        for (const json::value& name : value.get_array()) {
            if (!name.is_string()) Refuse(std::string(key) + " lists something that is no name");
            names.emplace_back(name.get_string());
        }
        return names;
    }

    std::unique_ptr<const Combinators> CombinatorsOf(const json::object& schema,
                                                     std::size_t depth) {
        auto rules = std::make_unique<Combinators>();
        rules->all_of = ListOf(schema, "allOf", depth);
        rules->any_of = ListOf(schema, "anyOf", depth);
        rules->one_of = ListOf(schema, "oneOf", depth);
        rules->negated = ChildOf(schema, "not", depth);
        rules->if_schema = ChildOf(schema, "if", depth);
        if (rules->if_schema != kNoNode) {  // then and else mean nothing without if
            rules->then_schema = ChildOf(schema, "then", depth);
            rules->else_schema = ChildOf(schema, "else", depth);
        }
        const bool any = !rules->all_of.empty() || !rules->any_of.empty() ||
                         !rules->one_of.empty() || rules->negated != kNoNode ||
                         rules->if_schema != kNoNode;
        return any ? std::move(rules) : nullptr;
    }

    // Refuses schemas that apply to the same value again and again without end — a `$ref` to
    // itself, `allOf` back to an ancestor — or in chains deeper than kMaxInPlaceDepth: the check
    // would recurse until the stack ran out, or fan out beyond any use.
    void CheckInPlaceChains() {
        std::vector<int> height(tree_.nodes.size(), kUnseen);
        for (NodeId id = 0; id < tree_.nodes.size(); ++id) {
            if (Height(id, 0, height) < 0) {
                location_ = "#";
                Refuse("schemas apply to one value without end (a $ref to itself?), or nest " +
                       std::string("deeper than ") + std::to_string(kMaxInPlaceDepth));
            }
        }
    }

    static constexpr int kUnseen = -2;
    static constexpr int kOnPath = -3;

    // The longest chain of in-place schemas below `id`; -1 for a cycle or a chain too long.
    int Height(NodeId id, int depth, std::vector<int>& height) const {
        if (depth > kMaxInPlaceDepth) return -1;
        if (height[id] == kOnPath) return -1;
        if (height[id] != kUnseen) return height[id];
        height[id] = kOnPath;
        int longest = 0;
        for (const NodeId next : InPlace(tree_.nodes[id])) {
            const int below = Height(next, depth + 1, height);
            if (below < 0) return height[id] = -1;
            longest = std::max(longest, below + 1);
        }
        return height[id] = longest > kMaxInPlaceDepth ? -1 : longest;
    }

    static std::vector<NodeId> InPlace(const SchemaNode& node) {
        std::vector<NodeId> next;
        if (node.kind == SchemaNode::Kind::kRef) next.push_back(node.ref);
        if (const Combinators* rules = node.combinators.get()) {
            for (const auto* list : {&rules->all_of, &rules->any_of, &rules->one_of}) {
                next.insert(next.end(), list->begin(), list->end());
            }
            for (const NodeId id :
                 {rules->negated, rules->if_schema, rules->then_schema, rules->else_schema}) {
                next.push_back(id);
            }
        }
        if (const ObjectRules* rules = node.objects.get()) {
            for (const Dependency& dependency : rules->dependencies) {
                next.push_back(dependency.schema);
            }
        }
        std::erase(next, kNoNode);
        return next;
    }

    const json::value& root_;
    SchemaTree tree_;
    std::unordered_map<const json::value*, NodeId> ids_;
    std::unordered_map<std::string, const SchemaPattern*> patterns_;
    std::vector<PendingRef> pending_;
    std::string location_ = "#";  // the JSON pointer of the schema being compiled
};

}  // namespace

std::variant<SchemaTree, std::string> CompileSchemaTree(const json::value& schema) {
    try {
        return Compiler(schema).Run();
    } catch (const Refusal& refusal) {
        return refusal.why;
    }
}

}  // namespace switchyard::answers
