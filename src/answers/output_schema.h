#pragma once

#include <boost/json/value.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace switchyard::answers {

// A JSON Schema that answers are checked against (docs/answers.md#output-validation), compiled
// once per request with valijson (draft 7 keywords; `strict` changes nothing here: the schema is
// enforced exactly as given, whichever deployment answered). Immutable; shareable.
class OutputSchema final {
  public:
    // The compiled schema, or why `schema` cannot be one.
    static std::variant<std::shared_ptr<const OutputSchema>, std::string> Compile(
        const boost::json::value& schema);

    ~OutputSchema();

    // nullopt when `text` is JSON that matches; else what is wrong (the first problem, with its
    // place in the document).
    std::optional<std::string> Check(std::string_view text) const;

  private:
    struct Compiled;
    explicit OutputSchema(std::unique_ptr<Compiled> compiled);
    std::unique_ptr<Compiled> compiled_;
};

}  // namespace switchyard::answers
