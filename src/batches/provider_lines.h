#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "batches/batch_job.h"
#include "batches/batch_lines.h"
#include "config/config.h"
#include "core/error.h"

namespace switchyard::batches {

// How a job's lines and results cross to a provider's batch API and back
// (docs/batches.md#on-the-providers-batch-api): pure, no I/O.

// Whether `deployment`'s provider batch API can take a job of `api` for `endpoint`: OpenAI takes
// chat (from either API, translated), Responses and embeddings; Anthropic takes chat and messages.
bool ProviderTakes(const config::Deployment& deployment, Api api, std::string_view endpoint);

// The body of one line as the deployment's batch API wants it (its model, translated when the
// deployment speaks the other API); a LocalError (400) when it cannot be carried over.
std::variant<std::string, core::LocalError> ProviderBody(const config::Deployment& deployment,
                                                         Api api, const InputLine& line);

// The upstream custom_id of line `line` ("l<N>": every provider accepts it), and back.
std::string ProviderCustomId(std::int64_t line);
std::optional<std::int64_t> LineOfProviderId(std::string_view id);

// One result line of the provider's batch, read: the line it answers, and its HTTP status and
// body (as the provider sent them), or how it ended without an answer.
struct ProviderResult {
    std::int64_t line = -1;
    unsigned status = 0;  // 0: no answer (see `unrun`)
    std::string request_id;
    std::string body;
    std::optional<Unrun> unrun;
};
// Reads an OpenAI output or error line, or an Anthropic results line (nullopt: not one).
std::optional<ProviderResult> ReadProviderResult(const config::Deployment& deployment,
                                                 std::string_view text);

// The answer as the client's API has it: the body translated when the deployment speaks the
// other API (errors too). `created` dates a translated chat completion.
std::string ClientBody(const config::Deployment& deployment, Api api, std::string_view endpoint,
                       unsigned status, std::string_view body, std::int64_t created);

// What a provider batch's line cost at the deployment's batch prices.
double BatchCost(const config::Deployment& deployment, double ratio, const Tokens& tokens);

}  // namespace switchyard::batches
