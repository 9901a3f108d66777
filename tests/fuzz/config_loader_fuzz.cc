// Any config text: a loaded config or a list of problems with their lines, never a crash or an
// exception (YAML bombs, deep nesting and odd scalars included).
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "config/config_loader.h"

using namespace switchyard;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const config::EnvLookup env = [](std::string_view name) -> std::optional<std::string> {
        if (name == "FUZZ_KEY") return std::string("sk-fuzz-0123456789abcdef");
        return std::nullopt;
    };
    const config::LoadResult result = config::LoadConfigText(text, "fuzz.yaml", env);
    if (result.problems.empty() != static_cast<bool>(result.config)) std::abort();
    return 0;
}
