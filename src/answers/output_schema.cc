// valijson reports a schema it cannot read by exception (else it would abort the process).
#define VALIJSON_USE_EXCEPTIONS 1

#include "answers/output_schema.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <stdexcept>
#include <unordered_map>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#include <vector>

#include "core/json.h"

namespace switchyard::answers {

namespace {

namespace json = boost::json;

// How many schemas may apply, one inside the other, to the same part of a document: allOf,
// anyOf, oneOf, not, if/then/else, dependencies and $ref do not descend into it.
constexpr int kMaxInPlaceDepth = 256;

// Finds schemas that apply to the same part of the document again and again without end — a
// `$ref` to itself, `allOf` back to an ancestor — or chains deeper than kMaxInPlaceDepth, and
// references that leave the document: valijson would recurse until the stack runs out. Every
// object counts as a schema (a property literally named "not" may be taken for one), which only
// errs towards refusing — and a refused schema is not checked, the request still served.
class InPlaceWalk {
  public:
    explicit InPlaceWalk(const json::value& root) : root_(root) {}

    // True when every schema in the document is safe to compile.
    bool Safe() {
        std::vector<const json::value*> pending{&root_};
        while (!pending.empty()) {
            const json::value* node = pending.back();
            pending.pop_back();
            if (const json::object* object = node->if_object()) {
                if (!LocalReferencesOnly(*object) || !Visit(node, 0)) return false;
                for (const auto& member : *object) pending.push_back(&member.value());
            } else if (const json::array* array = node->if_array()) {
                for (const json::value& element : *array) pending.push_back(&element);
            }
        }
        return true;
    }

  private:
    static constexpr int kOnPath = -2;

    // References within the document only ("#" or a JSON pointer "#/..."), and no `$id` that
    // would move their base: anything else may point anywhere, itself included.
    bool LocalReferencesOnly(const json::object& schema) const {
        for (const char* key : {"$id", "id"}) {
            if (const json::value* id = schema.if_contains(key); id && id->is_string())
                return false;
        }
        const json::value* ref = schema.if_contains("$ref");
        if (ref == nullptr) return true;
        if (!ref->is_string()) return false;
        const std::string_view target = ref->get_string();
        if (target == "#") return true;
        // A plain pointer — named segments of letters, digits and `_-.$`, none empty, no escapes:
        // read the same way by valijson and here — to something that is there.
        const bool plain = target.starts_with("#/") && !target.ends_with('/') &&
                           target.find("//") == std::string_view::npos &&
                           std::all_of(target.begin() + 1, target.end(), [](char c) {
                               return std::isalnum(static_cast<unsigned char>(c)) || c == '/' ||
                                      c == '_' || c == '-' || c == '.' || c == '$';
                           });
        return plain && Resolve(target) != nullptr;
    }

    // Whether the in-place chains below `node`, entered `depth` deep, end within the cap.
    bool Visit(const json::value* node, int depth) {
        const int height = Height(node, depth);
        return height >= 0 && depth + height <= kMaxInPlaceDepth;
    }

    // The longest in-place chain below `node` (0: none); -1 for a cycle or one past the cap.
    int Height(const json::value* node, int depth) {
        if (depth > kMaxInPlaceDepth) return -1;
        // A reference: the map may rehash below, which moves no element.
        auto [it, fresh] = height_.try_emplace(node, kOnPath);
        int& height = it->second;
        if (!fresh) return height == kOnPath ? -1 : height;  // on the path again: a cycle
        int longest = 0;
        ForEachInPlace(*node, [&](const json::value* next) {
            if (longest < 0 || next == nullptr || !next->is_object()) return;
            const int below = Height(next, depth + 1);
            longest = below < 0 ? -1 : std::max(longest, below + 1);
        });
        height = longest > kMaxInPlaceDepth ? -1 : longest;
        return height;
    }

    template <class Next>
    void ForEachInPlace(const json::value& node, Next next) {
        const json::object* schema = node.if_object();
        if (schema == nullptr) return;
        for (const char* key : {"allOf", "anyOf", "oneOf"}) {
            if (const json::value* list = schema->if_contains(key); list && list->is_array()) {
                for (const json::value& element : list->get_array()) next(&element);
            }
        }
        for (const char* key : {"not", "if", "then", "else"}) {
            if (const json::value* sub = schema->if_contains(key)) next(sub);
        }
        if (const json::value* deps = schema->if_contains("dependencies");
            deps && deps->is_object()) {
            for (const auto& member : deps->get_object()) next(&member.value());
        }
        if (const json::value* ref = schema->if_contains("$ref"); ref && ref->is_string()) {
            const std::string_view target = ref->get_string();
            if (target.starts_with('#')) next(Resolve(target));
        }
    }

    // The schema a local reference names (null: none).
    const json::value* Resolve(std::string_view target) const {
        boost::system::error_code ec;
        return root_.find_pointer(target.substr(1), ec);
    }

    const json::value& root_;
    std::unordered_map<const json::value*, int> height_;
};

}  // namespace

struct OutputSchema::Compiled {
    valijson::Schema schema;
};

OutputSchema::OutputSchema(std::unique_ptr<Compiled> compiled) : compiled_(std::move(compiled)) {}
OutputSchema::~OutputSchema() = default;

std::variant<std::shared_ptr<const OutputSchema>, std::string> OutputSchema::Compile(
    const boost::json::value& schema) {
    if (!schema.is_object()) return std::string("the schema is not a JSON object");
    if (!InPlaceWalk(schema).Safe()) {
        return std::string(
            "the schema refers to itself without end, or nests schemas deeper than " +
            std::to_string(kMaxInPlaceDepth));
    }
    auto compiled = std::make_unique<Compiled>();
    try {
        valijson::SchemaParser parser;
        const valijson::adapters::BoostJsonAdapter adapter(schema);
        parser.populateSchema(adapter, compiled->schema);
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    return std::shared_ptr<const OutputSchema>(new OutputSchema(std::move(compiled)));
}

std::optional<std::string> OutputSchema::Check(std::string_view text) const {
    boost::system::error_code ec;
    const boost::json::value document = core::ParseJson(text, ec);
    if (ec) return std::string("the answer is not JSON");
    valijson::Validator validator;  // strong types: "1" is no integer
    valijson::ValidationResults results;
    try {
        const valijson::adapters::BoostJsonAdapter adapter(document);
        if (validator.validate(compiled_->schema, adapter, &results)) return std::nullopt;
    } catch (const std::exception& e) {
        return std::string("the schema could not be applied: ") + e.what();
    }
    // The deepest problem says the most: valijson reports the failing node before its parents.
    valijson::ValidationResults::Error error;
    if (!results.popError(error)) return std::string("the answer does not match the schema");
    std::string where;
    for (const std::string& part : error.context) where += part;
    return where + ": " + error.description;
}

}  // namespace switchyard::answers
