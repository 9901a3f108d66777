#pragma once

#include <string>

#include "core/asio.h"
#include "core/url.h"
#include "upstream/tls_contexts.h"

namespace switchyard::upstream {

// Fire-and-forget POST of a JSON document to `url` (an alert webhook), on `executor`. Bounded by
// a 10 s timeout; a failure is reported on stderr and never retried, and never delays a request.
void PostWebhook(asio::any_io_executor executor, TlsContexts& tls, const std::string& url,
                 std::string json);

}  // namespace switchyard::upstream
