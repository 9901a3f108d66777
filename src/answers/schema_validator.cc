#include "answers/schema_validator.h"

#include <algorithm>
#include <bit>
#include <boost/json.hpp>
#include <cctype>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answers/json_values.h"
#include "answers/rfc3339.h"

namespace switchyard::answers {
namespace {

namespace json = boost::json;

// Bytes read per step (counting code points, checking a format, hashing a member name): ~1 ns a
// byte, so well under 0.1 µs a step.
constexpr std::size_t kBytesPerStep = 64;
// Canonical forms (enum, const, uniqueItems) are written to memory, and objects sorted on the
// way: CanonicalWriter::work() units per step. Measured: writing the forms of 200,000 strings
// took ~40 ns a step, most of it page faults on fresh memory (a paravirtualised VM); sorting the
// members of 3,000-member objects ~5 ns. A check writes at most 4 MB of forms per 1M steps.
constexpr std::size_t kFormWorkPerStep = 4;

enum class Result { kPass, kFail, kStop };

struct Problem {
    std::string where;
    std::string what;
    std::size_t depth = 0;  // path segments to `where`
};

// A member name or an item index on the way from the root to the value being checked.
struct Segment {
    std::string_view key;
    std::size_t index = 0;
    bool is_index = false;
};

bool IsIdentifier(std::string_view key) {
    if (key.empty() || key.size() > 64 || std::isdigit(static_cast<unsigned char>(key[0]))) {
        return false;
    }
    return std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '-';
    });
}

bool FormatHolds(Format format, std::string_view text) {
    switch (format) {
        case Format::kDate:
            return IsRfc3339Date(text);
        case Format::kTime:
            return IsRfc3339Time(text);
        case Format::kDateTime:
            return IsRfc3339DateTime(text);
        default:
            return true;
    }
}

std::string_view FormatName(Format format) {
    return format == Format::kDate ? "date" : format == Format::kTime ? "time" : "date-time";
}

std::size_t Log2(std::size_t n) { return static_cast<std::size_t>(std::bit_width(n)); }

// One check of one document: the path, the first problem, the steps left. Lives on the caller's
// stack; the tree is only read.
class Validation {
  public:
    Validation(const SchemaTree& tree, std::size_t max_steps)
        : tree_(tree), max_steps_(max_steps), steps_left_(max_steps) {}

    SchemaVerdict Run(const json::value& document) {
        switch (Apply(0, document)) {
            case Result::kPass:
                return {SchemaVerdict::Result::kPassed, ""};
            case Result::kFail:
                return {SchemaVerdict::Result::kFailed, problem_->where + ": " + problem_->what};
            default:
                return {SchemaVerdict::Result::kSkipped, stop_};
        }
    }

  private:
    // Pushes a path segment for its lifetime.
    class Descent {
      public:
        Descent(std::vector<Segment>& path, Segment segment) : path_(path) {
            path_.push_back(segment);
        }
        ~Descent() { path_.pop_back(); }
        Descent(const Descent&) = delete;
        Descent& operator=(const Descent&) = delete;

      private:
        std::vector<Segment>& path_;
    };

    bool Spend(std::size_t steps) {
        if (steps > steps_left_) {
            steps_left_ = 0;
            Stop("the check needs more than " + std::to_string(max_steps_) +
                 " steps (the schema is too costly to apply to this answer)");
            return false;
        }
        steps_left_ -= steps;
        return true;
    }

    Result Stop(std::string why) {
        if (stop_.empty()) stop_ = std::move(why);
        return Result::kStop;
    }

    // Records the first problem at the current path. Building it is charged: a path is up to
    // ~kMaxJsonDepth segments of up to ~70 bytes.
    Result Fail(std::string what) {
        if (!Spend(1 + path_.size())) return Result::kStop;
        if (!problem_) problem_ = Problem{Where(), std::move(what), path_.size()};
        return Result::kFail;
    }

    std::string Where() const {
        std::string where = "<root>";
        for (const Segment& segment : path_) {
            if (segment.is_index) {
                where.append("[").append(std::to_string(segment.index)).append("]");
            } else if (IsIdentifier(segment.key)) {
                where.append(".").append(segment.key);
            } else {
                where.append("[").append(ShortQuoted(segment.key)).append("]");
            }
        }
        return where;
    }

    // Takes the problem a tolerated failure (a branch of anyOf, oneOf, not, if, contains) left.
    std::optional<Problem> TakeProblem() {
        std::optional<Problem> taken = std::move(problem_);
        problem_.reset();
        return taken;
    }

    Result Apply(NodeId id, const json::value& instance) {
        if (!Spend(1)) return Result::kStop;
        if (depth_ >= JsonSchema::kMaxCheckDepth) {
            return Stop("schemas apply more than " + std::to_string(JsonSchema::kMaxCheckDepth) +
                        " deep on this answer");
        }
        ++depth_;
        const Result result = ApplyNode(tree_.nodes[id], instance);
        --depth_;
        return result;
    }

    Result ApplyNode(const SchemaNode& node, const json::value& instance) {
        switch (node.kind) {
            case SchemaNode::Kind::kTrue:
                return Result::kPass;
            case SchemaNode::Kind::kFalse:
                return Fail("is not allowed here (the schema is false)");
            case SchemaNode::Kind::kRef:
                return Apply(node.ref, instance);
            case SchemaNode::Kind::kRules:
                break;
        }
        if ((TypesOf(instance) & node.types) == 0) {
            return Fail("is " + KindOf(instance) + ", not " + TypeNames(node.types));
        }
        Result result = Result::kPass;
        if (node.values) result = CheckValues(*node.values, instance);
        if (result == Result::kPass && node.numbers && instance.is_number()) {
            result = CheckNumber(*node.numbers, instance);
        }
        if (result == Result::kPass && node.strings && instance.is_string()) {
            result = CheckString(*node.strings, instance.get_string());
        }
        if (result == Result::kPass && node.arrays && instance.is_array()) {
            result = CheckArray(*node.arrays, instance.get_array());
        }
        if (result == Result::kPass && node.objects && instance.is_object()) {
            result = CheckObject(*node.objects, instance);
        }
        if (result == Result::kPass && node.combinators) {
            result = CheckCombinators(*node.combinators, instance);
        }
        return result;
    }

    // kPass when `instance` is one of `set`, kFail (nothing recorded) when not.
    Result InValueSet(const ValueSet& set, const json::value& instance) {
        CanonicalWriter form(set.longest);  // a longer form equals none of them
        const bool fits = form.Append(instance);
        if (!Spend(1 + form.work() / kFormWorkPerStep + Log2(set.canonical.size()))) {
            return Result::kStop;
        }
        const bool found =
            fits && std::binary_search(set.canonical.begin(), set.canonical.end(), form.text());
        return found ? Result::kPass : Result::kFail;
    }

    Result CheckValues(const ValueRules& rules, const json::value& instance) {
        if (rules.enumeration) {
            const Result result = InValueSet(*rules.enumeration, instance);
            if (result == Result::kFail) return Fail("is not one of " + rules.enumeration->shown);
            if (result == Result::kStop) return result;
        }
        if (rules.constant) {
            const Result result = InValueSet(*rules.constant, instance);
            if (result == Result::kFail) return Fail("is not " + rules.constant->shown);
            if (result == Result::kStop) return result;
        }
        return Result::kPass;
    }

    Result CheckNumber(const NumberRules& rules, const json::value& number) {
        if (rules.multiple_of && !IsMultipleOf(number, *rules.multiple_of)) {
            return Fail("is not a multiple of " + ShortJson(*rules.multiple_of));
        }
        if (rules.maximum && CompareNumbers(number, *rules.maximum) > 0) {
            return Fail("is greater than " + ShortJson(*rules.maximum));
        }
        if (rules.exclusive_maximum && CompareNumbers(number, *rules.exclusive_maximum) >= 0) {
            return Fail("is not less than " + ShortJson(*rules.exclusive_maximum));
        }
        if (rules.minimum && CompareNumbers(number, *rules.minimum) < 0) {
            return Fail("is less than " + ShortJson(*rules.minimum));
        }
        if (rules.exclusive_minimum && CompareNumbers(number, *rules.exclusive_minimum) <= 0) {
            return Fail("is not greater than " + ShortJson(*rules.exclusive_minimum));
        }
        return Result::kPass;
    }

    // kPass when `pattern` matches in `text`, kFail (nothing recorded) when not.
    Result Find(const SchemaPattern& pattern, std::string_view text) {
        if (!Spend(pattern.Cost(text.size()))) return Result::kStop;
        switch (pattern.Find(text)) {
            case SchemaPattern::Found::kYes:
                return Result::kPass;
            case SchemaPattern::Found::kNo:
                return Result::kFail;
            default:
                return Stop("pattern " + ShortQuoted(pattern.source()) +
                            " ran out of memory on this answer");
        }
    }

    Result CheckString(const StringRules& rules, std::string_view text) {
        if (rules.min_length || rules.max_length) {
            if (!Spend(1 + text.size() / kBytesPerStep)) return Result::kStop;
            const std::size_t length = CodePoints(text);
            if (rules.min_length && length < *rules.min_length) {
                return Fail("is shorter than " + std::to_string(*rules.min_length) + " characters");
            }
            if (rules.max_length && length > *rules.max_length) {
                return Fail("is longer than " + std::to_string(*rules.max_length) + " characters");
            }
        }
        if (rules.pattern != nullptr) {
            const Result found = Find(*rules.pattern, text);
            if (found == Result::kFail) {
                return Fail("does not match pattern " + ShortQuoted(rules.pattern->source()));
            }
            if (found == Result::kStop) return found;
        }
        if (rules.format != Format::kAny) {
            if (!Spend(1 + text.size() / kBytesPerStep)) return Result::kStop;
            if (!FormatHolds(rules.format, text)) {
                return Fail("is not a valid " + std::string(FormatName(rules.format)) +
                            " (RFC 3339)");
            }
        }
        return Result::kPass;
    }

    Result CheckArray(const ArrayRules& rules, const json::array& items) {
        const std::string count = std::to_string(items.size());
        if (rules.min_items && items.size() < *rules.min_items) {
            return Fail("has " + count + " items, fewer than " + std::to_string(*rules.min_items));
        }
        if (rules.max_items && items.size() > *rules.max_items) {
            return Fail("has " + count + " items, more than " + std::to_string(*rules.max_items));
        }
        // Each pass of these loops applies a schema, so each is charged.
        for (std::size_t i = 0; i < items.size(); ++i) {
            const NodeId schema = !rules.tuple_form        ? rules.items
                                  : i < rules.tuple.size() ? rules.tuple[i]
                                                           : rules.additional;
            if (schema == kNoNode) break;
            const Descent descent(path_, {{}, i, true});
            if (const Result result = Apply(schema, items[i]); result != Result::kPass) {
                return result;
            }
        }
        if (rules.unique) {
            if (const Result result = CheckUnique(items); result != Result::kPass) return result;
        }
        if (rules.contains != kNoNode) {
            for (std::size_t i = 0; i < items.size(); ++i) {
                const Descent descent(path_, {{}, i, true});
                const Result result = Apply(rules.contains, items[i]);
                if (result != Result::kFail) return result;
                TakeProblem();
            }
            return Fail("has no item that matches the contains schema");
        }
        return Result::kPass;
    }

    // Sorts the items' canonical forms, written into one buffer: O(n log n) comparisons, charged
    // with the work of writing them. Equal forms are equal values (json_values.h).
    Result CheckUnique(const json::array& items) {
        constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
        // Never write more than the steps left pay for.
        CanonicalWriter forms(
            steps_left_ > kMax / kFormWorkPerStep ? kMax : steps_left_ * kFormWorkPerStep);
        std::vector<std::size_t> ends;  // form i is text()[ends[i - 1], ends[i])
        ends.reserve(items.size());
        for (const json::value& item : items) {
            if (!forms.Append(item)) {
                Spend(steps_left_ + 1);  // more than is left (or deeper than any parsed answer)
                return Result::kStop;
            }
            ends.push_back(forms.text().size());
        }
        // A comparison of two short forms is a few ns: 16 of them to the step, and the bytes
        // compared on top, log n times each.
        const std::size_t n = items.size();
        if (!Spend(n + forms.work() / kFormWorkPerStep +
                   Log2(n) * (n / 16 + forms.text().size() / kBytesPerStep))) {
            return Result::kStop;
        }
        const std::string_view text = forms.text();
        const auto form = [&](std::size_t i) {
            const std::size_t begin = i == 0 ? 0 : ends[i - 1];
            return text.substr(begin, ends[i] - begin);
        };
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            const int compared = form(a).compare(form(b));
            return compared != 0 ? compared < 0 : a < b;
        });
        for (std::size_t i = 1; i < n; ++i) {
            if (form(order[i - 1]) == form(order[i])) {
                return Fail("has equal items at " + std::to_string(order[i - 1]) + " and " +
                            std::to_string(order[i]) + " (uniqueItems)");
            }
        }
        return Result::kPass;
    }

    Result CheckObject(const ObjectRules& rules, const json::value& instance) {
        const json::object& object = instance.get_object();
        const std::string count = std::to_string(object.size());
        if (rules.min_properties && object.size() < *rules.min_properties) {
            return Fail("has " + count + " properties, fewer than " +
                        std::to_string(*rules.min_properties));
        }
        if (rules.max_properties && object.size() > *rules.max_properties) {
            return Fail("has " + count + " properties, more than " +
                        std::to_string(*rules.max_properties));
        }
        if (const Result result = CheckRequired(rules.required, object, "is required");
            result != Result::kPass) {
            return result;
        }
        const bool per_member = !rules.properties.empty() || !rules.pattern_properties.empty() ||
                                rules.additional != kNoNode || !rules.dependencies.empty() ||
                                rules.property_names != kNoNode;
        if (!per_member) return Result::kPass;
        for (const auto& member : object) {
            if (!Spend(1 + member.key().size() / kBytesPerStep)) return Result::kStop;
            if (const Result result = CheckMember(rules, member, instance);
                result != Result::kPass) {
                return result;
            }
        }
        return Result::kPass;
    }

    Result CheckRequired(const std::vector<std::string>& names, const json::object& object,
                         std::string_view what) {
        for (const std::string& name : names) {
            if (!Spend(1 + name.size() / kBytesPerStep)) return Result::kStop;
            if (!object.contains(name)) {
                const Descent descent(path_, {name});
                return Fail(std::string(what));
            }
        }
        return Result::kPass;
    }

    // properties, patternProperties, additionalProperties, dependencies and propertyNames for one
    // member.
    Result CheckMember(const ObjectRules& rules, const json::key_value_pair& member,
                       const json::value& object) {
        const std::string_view name = member.key();
        bool covered = false;
        {
            const Descent descent(path_, {name});
            const auto property = std::lower_bound(
                rules.properties.begin(), rules.properties.end(), name,
                [](const auto& entry, std::string_view key) { return entry.first < key; });
            if (property != rules.properties.end() && property->first == name) {
                covered = true;
                const Result result = Apply(property->second, member.value());
                if (result != Result::kPass) return result;
            }
            for (const PatternProperty& pattern : rules.pattern_properties) {
                const Result found = Find(*pattern.pattern, name);
                if (found == Result::kStop) return found;
                if (found == Result::kFail) continue;
                covered = true;
                const Result result = Apply(pattern.schema, member.value());
                if (result != Result::kPass) return result;
            }
            if (!covered && rules.additional != kNoNode) {
                if (tree_.nodes[rules.additional].kind == SchemaNode::Kind::kFalse) {
                    return Fail("is not a property the schema allows (additionalProperties)");
                }
                const Result result = Apply(rules.additional, member.value());
                if (result != Result::kPass) return result;
            }
        }
        if (const Result result = CheckDependency(rules, name, object); result != Result::kPass) {
            return result;
        }
        if (rules.property_names != kNoNode) {
            const Result result = Apply(rules.property_names, json::value(name));
            if (result != Result::kFail) return result;
            const std::optional<Problem> problem = TakeProblem();
            return Fail("has a property name " + ShortQuoted(name) + " that " + problem->what);
        }
        return Result::kPass;
    }

    Result CheckDependency(const ObjectRules& rules, std::string_view name,
                           const json::value& object) {
        const auto dependency = std::lower_bound(
            rules.dependencies.begin(), rules.dependencies.end(), name,
            [](const Dependency& entry, std::string_view key) { return entry.name < key; });
        if (dependency == rules.dependencies.end() || dependency->name != name) {
            return Result::kPass;
        }
        const std::string what = "is required when " + ShortQuoted(name) + " is present";
        if (const Result result = CheckRequired(dependency->required, object.get_object(), what);
            result != Result::kPass) {
            return result;
        }
        if (dependency->schema == kNoNode) return Result::kPass;
        return Apply(dependency->schema, object);
    }

    Result CheckCombinators(const Combinators& rules, const json::value& instance) {
        for (const NodeId id : rules.all_of) {
            if (const Result result = Apply(id, instance); result != Result::kPass) return result;
        }
        if (!rules.any_of.empty()) {
            if (const Result result = AnyOf(rules.any_of, instance); result != Result::kPass) {
                return result;
            }
        }
        if (!rules.one_of.empty()) {
            if (const Result result = OneOf(rules.one_of, instance); result != Result::kPass) {
                return result;
            }
        }
        if (rules.negated != kNoNode) {
            const Result result = Apply(rules.negated, instance);
            if (result == Result::kPass) return Fail("matches the schema under not");
            if (result == Result::kStop) return result;
            TakeProblem();
        }
        if (rules.if_schema != kNoNode) {
            const Result condition = Apply(rules.if_schema, instance);
            if (condition == Result::kStop) return condition;
            TakeProblem();
            const NodeId next = condition == Result::kPass ? rules.then_schema : rules.else_schema;
            if (next != kNoNode) return Apply(next, instance);
        }
        return Result::kPass;
    }

    Result AnyOf(const std::vector<NodeId>& branches, const json::value& instance) {
        std::optional<Problem> deepest;
        for (const NodeId id : branches) {
            const Result result = Apply(id, instance);
            if (result != Result::kFail) return result;
            std::optional<Problem> problem = TakeProblem();
            if (!deepest || problem->depth > deepest->depth) deepest = std::move(problem);
        }
        return NoBranch(
            std::move(deepest),
            "matches none of the " + std::to_string(branches.size()) + " schemas in anyOf");
    }

    Result OneOf(const std::vector<NodeId>& branches, const json::value& instance) {
        std::optional<Problem> deepest;
        std::optional<std::size_t> matched;
        for (std::size_t i = 0; i < branches.size(); ++i) {
            const Result result = Apply(branches[i], instance);
            if (result == Result::kStop) return result;
            if (result == Result::kPass) {
                if (matched) {
                    return Fail("matches schemas " + std::to_string(*matched) + " and " +
                                std::to_string(i) + " of oneOf, where only one may match");
                }
                matched = i;
                continue;
            }
            std::optional<Problem> problem = TakeProblem();
            if (!deepest || problem->depth > deepest->depth) deepest = std::move(problem);
        }
        if (matched) return Result::kPass;
        return NoBranch(
            std::move(deepest),
            "matches none of the " + std::to_string(branches.size()) + " schemas in oneOf");
    }

    // Every branch failed: a branch that got below this value says the most; one that failed
    // here is no better than saying that none matched.
    Result NoBranch(std::optional<Problem> deepest, std::string what) {
        if (deepest && deepest->depth > path_.size()) {
            problem_ = std::move(deepest);
            return Result::kFail;
        }
        return Fail(std::move(what));
    }

    const SchemaTree& tree_;
    const std::size_t max_steps_;
    std::size_t steps_left_;
    std::size_t depth_ = 0;
    std::vector<Segment> path_;
    std::optional<Problem> problem_;  // set once a check fails; taken where failure is tolerated
    std::string stop_;                // why the check stopped, once it did
};

}  // namespace

SchemaVerdict ValidateDocument(const SchemaTree& tree, const json::value& document,
                               std::size_t max_steps) {
    return Validation(tree, max_steps).Run(document);
}

}  // namespace switchyard::answers
