#include "tool_call.h"

#include <algorithm>

#include "structured_output.h"

namespace switchyard::mock {
namespace {

constexpr std::size_t kFragments = 3;

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

ToolChoice ChooseTool(std::span<const OfferedTool> tools, ToolMode mode, std::string_view name) {
    ToolChoice choice;
    if (tools.empty() || mode == ToolMode::kNone) return choice;
    choice.forced = mode == ToolMode::kAny || mode == ToolMode::kNamed;
    const OfferedTool* tool = &tools.front();
    if (mode == ToolMode::kNamed) {
        const auto named = std::find_if(tools.begin(), tools.end(),
                                        [name](const OfferedTool& t) { return t.name == name; });
        if (named != tools.end()) tool = &*named;
    }
    choice.candidate = ToolCall{std::string(tool->name), ToolArguments(tool->schema)};
    return choice;
}

std::vector<std::string_view> ArgumentFragments(std::string_view arguments) {
    std::vector<std::string_view> fragments;
    std::size_t start = 0;
    for (std::size_t i = 1; i <= kFragments && start < arguments.size(); ++i) {
        std::size_t end = i == kFragments ? arguments.size() : arguments.size() * i / kFragments;
        while (end < arguments.size() && IsContinuationByte(arguments[end])) ++end;
        if (end <= start) continue;
        fragments.push_back(arguments.substr(start, end - start));
        start = end;
    }
    return fragments;
}

}  // namespace switchyard::mock
