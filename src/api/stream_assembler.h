#pragma once

#include <boost/json/object.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace switchyard::api {

// Rebuilds one OpenAI chat.completion from the chunks of a chat.completion.chunk stream, for
// requests that are streamed upstream (so long generations never sit on an idle connection, see
// docs/providers.md#long-requests) but answered to the client as one JSON body. Text and tool-call
// arguments are concatenated per choice and index; the usage chunk is kept. Not thread-safe.
class OpenAiStreamAssembler final {
  public:
    // Adds one event's data (a chunk's JSON; `[DONE]` and non-JSON are ignored).
    void Add(std::string_view data);
    bool Empty() const { return chunks_ == 0; }
    // The assembled chat.completion.
    std::string Json() const;

  private:
    struct ToolCall {
        std::string id;
        std::string type = "function";
        std::string name;
        std::string arguments;
    };
    struct Choice {
        std::string role = "assistant";
        std::string content;
        std::optional<std::string> refusal;
        std::map<long long, ToolCall> tool_calls;
        boost::json::value finish_reason;
    };

    int chunks_ = 0;
    boost::json::object head_;  // id, created, model, system_fingerprint, service_tier
    std::map<long long, Choice> choices_;
    boost::json::value usage_;
};

}  // namespace switchyard::api
