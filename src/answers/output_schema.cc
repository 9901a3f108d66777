// valijson reports a schema it cannot read by exception (else it would abort the process).
#define VALIJSON_USE_EXCEPTIONS 1

#include "answers/output_schema.h"

#include <boost/json.hpp>
#include <stdexcept>
#include <valijson/adapters/boost_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "core/json.h"

namespace switchyard::answers {

struct OutputSchema::Compiled {
    valijson::Schema schema;
};

OutputSchema::OutputSchema(std::unique_ptr<Compiled> compiled) : compiled_(std::move(compiled)) {}
OutputSchema::~OutputSchema() = default;

std::variant<std::shared_ptr<const OutputSchema>, std::string> OutputSchema::Compile(
    const boost::json::value& schema) {
    if (!schema.is_object()) return std::string("the schema is not a JSON object");
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
