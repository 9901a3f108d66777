#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// Tool calls as the mock answers them on every API that has tools (chat completions, Anthropic's
// messages, the Responses API): which tool a request lets the answer call, and the arguments,
// generated from the tool's parameter schema (docs/mock.md#tool-calls). No I/O.
namespace switchyard::mock {

// A call an answer makes: a tool's name and arguments that match the tool's parameter schema.
struct ToolCall final {
    std::string name;
    std::string arguments;  // JSON text of an object (ToolArguments in structured_output.h).
};

// What a request's `tools` and `tool_choice` allow.
struct ToolChoice final {
    // The tool an answer would call: the one `tool_choice` names, else the first tool. None when
    // the request offers no tool or its `tool_choice` is "none".
    std::optional<ToolCall> candidate;
    // `tool_choice` forces a call ("required", Anthropic's "any", or a tool by name).
    bool forced = false;

    // The call to answer with: the candidate when `tool_choice` forces one or the fault spec sets
    // `tool_use`; nullptr for a text answer.
    const ToolCall* Call(bool tool_use) const {
        return candidate && (forced || tool_use) ? &*candidate : nullptr;
    }
};

// One tool a request offers: its name and parameter schema (nullptr: it has none).
struct OfferedTool final {
    std::string_view name;
    const boost::json::value* schema = nullptr;
};

// How `tool_choice` lets the answer use the tools, in every API's spelling of it.
enum class ToolMode {
    kAuto,   // the model decides: no call unless the fault spec sets tool_use
    kNone,   // never a call
    kAny,    // some call: the first tool
    kNamed,  // a call of the named tool
};

// The ToolChoice for `tools` under `mode`; `name` is the tool kNamed asks for (a name that is not
// offered falls back to the first tool). Generates the candidate's arguments.
ToolChoice ChooseTool(std::span<const OfferedTool> tools, ToolMode mode, std::string_view name);

// `arguments` in the pieces a stream sends them in: at most three, none empty, cut between UTF-8
// characters; joined they are `arguments`. Views into `arguments`.
std::vector<std::string_view> ArgumentFragments(std::string_view arguments);

}  // namespace switchyard::mock
