#include "api/stream_assembler.h"

#include <boost/json.hpp>

#include "core/json.h"

namespace switchyard::api {
namespace {

const boost::json::string* StringMember(const boost::json::object& o, std::string_view key) {
    const boost::json::value* v = o.if_contains(key);
    return v != nullptr && v->is_string() ? &v->get_string() : nullptr;
}

}  // namespace

void OpenAiStreamAssembler::Add(std::string_view data) {
    boost::system::error_code ec;
    const boost::json::value value = core::ParseJson(data, ec);
    if (ec || !value.is_object()) return;
    const boost::json::object& chunk = value.get_object();
    ++chunks_;
    for (const char* key : {"id", "created", "model", "system_fingerprint", "service_tier"}) {
        if (const auto* v = chunk.if_contains(key); v && !v->is_null()) head_[key] = *v;
    }
    if (const auto* usage = chunk.if_contains("usage"); usage && usage->is_object()) {
        usage_ = *usage;
    }
    const auto* choices = chunk.if_contains("choices");
    if (choices == nullptr || !choices->is_array()) return;
    for (const auto& c : choices->get_array()) {
        if (!c.is_object()) continue;
        const auto& o = c.get_object();
        const auto* index = o.if_contains("index");
        Choice& choice = choices_[index && index->is_int64() ? index->get_int64() : 0];
        if (const auto* finish = o.if_contains("finish_reason"); finish && !finish->is_null()) {
            choice.finish_reason = *finish;
        }
        const auto* delta = o.if_contains("delta");
        if (delta == nullptr || !delta->is_object()) continue;
        const auto& d = delta->get_object();
        if (const auto* role = StringMember(d, "role")) choice.role = std::string(*role);
        if (const auto* content = StringMember(d, "content")) choice.content.append(*content);
        if (const auto* refusal = StringMember(d, "refusal")) {
            if (!choice.refusal) choice.refusal.emplace();
            choice.refusal->append(*refusal);
        }
        const auto* calls = d.if_contains("tool_calls");
        if (calls == nullptr || !calls->is_array()) continue;
        for (const auto& call : calls->get_array()) {
            if (!call.is_object()) continue;
            const auto& co = call.get_object();
            const auto* call_index = co.if_contains("index");
            ToolCall& tool =
                choice.tool_calls[call_index && call_index->is_int64()
                                      ? call_index->get_int64()
                                      : static_cast<long long>(choice.tool_calls.size())];
            if (const auto* id = StringMember(co, "id")) tool.id = std::string(*id);
            if (const auto* type = StringMember(co, "type")) tool.type = std::string(*type);
            const auto* function = co.if_contains("function");
            if (function == nullptr || !function->is_object()) continue;
            if (const auto* name = StringMember(function->get_object(), "name")) {
                tool.name.append(*name);
            }
            if (const auto* arguments = StringMember(function->get_object(), "arguments")) {
                tool.arguments.append(*arguments);
            }
        }
    }
}

std::string OpenAiStreamAssembler::Json() const {
    boost::json::object out = head_;
    out["object"] = "chat.completion";
    boost::json::array choices;
    for (const auto& [index, choice] : choices_) {
        boost::json::object message{{"role", choice.role}};
        message["content"] = choice.content.empty() && !choice.tool_calls.empty()
                                 ? boost::json::value(nullptr)
                                 : boost::json::value(boost::json::string(choice.content));
        message["refusal"] = choice.refusal
                                 ? boost::json::value(boost::json::string(*choice.refusal))
                                 : boost::json::value(nullptr);
        if (!choice.tool_calls.empty()) {
            boost::json::array calls;
            for (const auto& [call_index, tool] : choice.tool_calls) {
                calls.push_back(boost::json::object{
                    {"id", tool.id},
                    {"type", tool.type},
                    {"function", {{"name", tool.name}, {"arguments", tool.arguments}}}});
            }
            message["tool_calls"] = std::move(calls);
        }
        choices.push_back(boost::json::object{{"index", index},
                                              {"message", std::move(message)},
                                              {"logprobs", nullptr},
                                              {"finish_reason", choice.finish_reason}});
    }
    out["choices"] = std::move(choices);
    out["usage"] = usage_;
    return boost::json::serialize(out);
}

}  // namespace switchyard::api
