#pragma once

#include <boost/json/value.hpp>
#include <cstddef>

#include "answers/json_schema.h"
#include "answers/schema_tree.h"

namespace switchyard::answers {

// Applies `tree` to `document` within `max_steps` steps (json_schema.h: what a step is, what is
// reported). Short-circuits: stops at the first problem outside anyOf, oneOf, not, if and contains.
SchemaVerdict ValidateDocument(const SchemaTree& tree, const boost::json::value& document,
                               std::size_t max_steps);

}  // namespace switchyard::answers
