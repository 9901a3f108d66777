#pragma once

// How far a YAML document may expand once its aliases are followed. yaml-cpp shares the node an
// alias names (`*a` is the very node `&a` marked), so parsing stays linear, but anything that
// walks the result walks the expansion: ten lines of nested aliases name billions of nodes (a
// "billion laughs" document), and an alias inside its own anchor (`&a [*a]`) names a node that
// contains itself. Every reader of a config (the loader, the LiteLLM import) checks the whole
// document against these bounds once, before reading it, so no reader needs its own.
// Header-only so that both readers share it without another translation unit.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/json.h"
#include "core/names.h"

namespace switchyard::config {

// Far above any real config (a fleet of thousands of deployments is tens of thousands of nodes),
// far below what takes a reader seconds or a gigabyte.
inline constexpr std::size_t kMaxYamlNodes = 200'000;
// Scalar text, counted once per alias that names it (a long string aliased a thousand times is
// a thousand copies once read).
inline constexpr std::size_t kMaxYamlBytes = 16 << 20;
// The text of a config itself, before it is parsed (yaml-cpp holds a parsed document in some 70
// times the memory of its text).
inline constexpr std::size_t kMaxConfigBytes = 4 << 20;
// As deep as JSON is read anywhere; a config is a few levels deep, a JSON Schema a few dozen.
inline constexpr std::size_t kMaxYamlDepth = core::kMaxJsonDepth;

// Where and how a document passed a bound: the setting the walk was in when the count went past
// it (for a few nested aliases, the setting that holds them).
struct YamlOverflow {
    std::string path;     // the setting it was in, e.g. "models[0].validation.schema"; empty: top
    int line = 0;         // 1-based line of that setting
    std::string message;  // e.g. "expands the document past 200000 YAML nodes (YAML aliases?)"

    // "models[0].validation.schema: expands to ..." ("the document ..." at the top).
    std::string ToString() const {
        return (path.empty() ? std::string("the document") : path) + ": " + message;
    }
};

namespace yaml_limits_detail {

// Counts nodes, scalar bytes and depth along the expansion, depth first, and stops at the first
// bound passed. Map keys count as nodes but are not walked: every reader takes a key's scalar
// text only.
class ExpansionWalk final {
  public:
    std::optional<YamlOverflow> Run(const YAML::Node& root) {
        Walk(root, 0);
        return std::move(overflow_);
    }

  private:
    // How much of the path a problem names: down to the third key, which is the setting
    // ("models[0].validation.schema", "telemetry.headers.x-api-key"); below it is its content.
    static constexpr int kKeysNamed = 3;

    struct Step {
        std::string text;  // ".key" or "[i]" (the first key without its dot)
        bool key = false;
        int line = 0;
    };

    bool Walk(const YAML::Node& node, std::size_t depth) {
        if (++nodes_ > kMaxYamlNodes) {
            return TooManyNodes();
        }
        if (depth > kMaxYamlDepth) {
            return Stop("nests deeper than " + std::to_string(kMaxYamlDepth) +
                        " levels (a YAML alias inside its own anchor?)");
        }
        if (node.IsScalar()) return CountBytes(node.Scalar().size());
        if (node.IsSequence()) {
            std::size_t index = 0;
            for (const auto& item : node) {
                path_.push_back({"[" + std::to_string(index++) + "]", false, LineOf(item)});
                if (!Walk(item, depth + 1)) return false;
                path_.pop_back();
            }
        } else if (node.IsMap()) {
            for (const auto& entry : node) {
                if (++nodes_ > kMaxYamlNodes) return TooManyNodes();
                const std::string& key = entry.first.Scalar();
                if (!CountBytes(key.size())) return false;
                // A key is shown as a path step: printable, and short.
                std::string shown = core::Printable(key.substr(0, 64));
                path_.push_back({path_.empty() ? shown : "." + shown, true, LineOf(entry.first)});
                if (!Walk(entry.second, depth + 1)) return false;
                path_.pop_back();
            }
        }
        return true;
    }

    bool TooManyNodes() {
        return Stop("expands the document past " + std::to_string(kMaxYamlNodes) +
                    " YAML nodes (YAML aliases?)");
    }

    bool CountBytes(std::size_t size) {
        bytes_ += size;
        if (bytes_ <= kMaxYamlBytes) return true;
        return Stop("expands the document past " + std::to_string(kMaxYamlBytes >> 20) +
                    " MiB of text (YAML aliases?)");
    }

    static int LineOf(const YAML::Node& node) {
        return node.Mark().line >= 0 ? node.Mark().line + 1 : 0;
    }

    bool Stop(std::string message) {
        YamlOverflow overflow;
        overflow.message = std::move(message);
        int keys = 0;
        for (const Step& step : path_) {
            if (keys == kKeysNamed) break;
            overflow.path += step.text;
            overflow.line = step.line;
            if (step.key) ++keys;
        }
        overflow_ = std::move(overflow);
        return false;
    }

    std::size_t nodes_ = 0;
    std::size_t bytes_ = 0;
    std::vector<Step> path_;
    std::optional<YamlOverflow> overflow_;
};

}  // namespace yaml_limits_detail

// nullopt when `root`, aliases followed, stays within kMaxYamlNodes, kMaxYamlBytes and
// kMaxYamlDepth; otherwise where it passed the first of them. Work and stack are bounded by the
// same limits, whatever the document.
inline std::optional<YamlOverflow> CheckYamlExpansion(const YAML::Node& root) {
    return yaml_limits_detail::ExpansionWalk().Run(root);
}

}  // namespace switchyard::config
