#include "answers/output_schema.h"

#include "core/json.h"

namespace switchyard::answers {

std::variant<std::shared_ptr<const OutputSchema>, std::string> OutputSchema::Compile(
    const boost::json::value& schema) {
    auto compiled = JsonSchema::Compile(schema);
    if (std::string* why = std::get_if<std::string>(&compiled)) return std::move(*why);
    return std::shared_ptr<const OutputSchema>(
        new OutputSchema(std::move(std::get<JsonSchema>(compiled))));
}

SchemaVerdict OutputSchema::Check(std::string_view text, const SchemaLimits& limits) const {
    if (text.size() > limits.max_text_bytes) {
        return {SchemaVerdict::Result::kSkipped,
                "the answer is " + std::to_string(text.size()) + " bytes, more than the " +
                    std::to_string(limits.max_text_bytes) + " checked"};
    }
    boost::system::error_code ec;
    const boost::json::value document = core::ParseJson(text, ec);
    if (ec) return {SchemaVerdict::Result::kFailed, "the answer is not JSON"};
    return schema_.Validate(document, limits.max_steps);
}

}  // namespace switchyard::answers
