#include "answers/json_schema.h"

#include "answers/schema_compiler.h"
#include "answers/schema_validator.h"

namespace switchyard::answers {

std::variant<JsonSchema, std::string> JsonSchema::Compile(const boost::json::value& schema) {
    auto compiled = CompileSchemaTree(schema);
    if (std::string* why = std::get_if<std::string>(&compiled)) return std::move(*why);
    return JsonSchema(
        std::make_shared<const SchemaTree>(std::move(std::get<SchemaTree>(compiled))));
}

SchemaVerdict JsonSchema::Validate(const boost::json::value& document,
                                   std::size_t max_steps) const {
    return ValidateDocument(*tree_, document, max_steps);
}

}  // namespace switchyard::answers
