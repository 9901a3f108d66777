// Kept answers (docs/answers.md): decoding a stored answer, the cache's canonical form, and a
// client's JSON Schema compiled and applied — never a crash, an abort or a hang. The first byte
// picks the part; the rest is its input (for a schema: the schema, a newline, the document).
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "answers/output_schema.h"
#include "answers/request_key.h"
#include "answers/stored_answer.h"
#include "core/json.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return 0;
    const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 3) {
        case 0: {
            const auto answer = answers::Decode(input);
            // What decodes survives encoding and decoding again unchanged.
            if (answer) {
                const auto again = answers::Decode(answers::Encode(*answer));
                if (!again || again->status != answer->status || again->stream != answer->stream ||
                    again->headers != answer->headers || again->body != answer->body) {
                    std::abort();
                }
            }
            break;
        }
        case 1: {
            const auto canonical = answers::CanonicalJson(input);
            if (canonical) {
                // The canonical form is JSON again (its numbers may round differently: a cache
                // miss at worst, never a wrong hit).
                boost::system::error_code ec;
                core::ParseJson(*canonical, ec);
                if (ec) std::abort();
            }
            (void)answers::CacheKey("g", "/v1/chat/completions", "", input);
            break;
        }
        default: {
            const std::size_t split = input.find('\n');
            if (split == std::string_view::npos) return 0;
            boost::system::error_code ec;
            const boost::json::value schema = core::ParseJson(input.substr(0, split), ec);
            if (ec) return 0;
            auto compiled = answers::OutputSchema::Compile(schema);
            if (auto* ok = std::get_if<std::shared_ptr<const answers::OutputSchema>>(&compiled)) {
                (void)(*ok)->Check(input.substr(split + 1));
            }
        }
    }
    return 0;
}
