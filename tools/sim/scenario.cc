#include "scenario.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <stdexcept>

namespace switchyard::sim {

namespace {

[[noreturn]] void Fail(const std::string& where, const std::string& what) {
    throw std::runtime_error(where + ": " + what);
}

// Every key of `map` must be one of `known`: a misspelt setting is an error, not a default.
void CheckKeys(const YAML::Node& map, const std::string& where,
               std::initializer_list<std::string_view> known) {
    if (!map.IsMap()) Fail(where, "expected a mapping");
    const std::set<std::string_view> names(known);
    for (const auto& entry : map) {
        const std::string key = entry.first.as<std::string>();
        if (!names.contains(key)) Fail(where, "unknown key '" + key + "'");
    }
}

template <class T>
T Read(const YAML::Node& map, const char* key, T fallback, const std::string& where) {
    const YAML::Node node = map[key];
    if (!node) return fallback;
    try {
        return node.as<T>();
    } catch (const YAML::Exception&) {
        Fail(where, fmt::format("'{}' has the wrong type", key));
    }
}

// The node at `path` (keys and sequence indices separated by dots) below `root`, created as
// needed, set to `value`.
void SetPath(YAML::Node root, const std::string& path, const YAML::Node& value) {
    YAML::Node node = root;
    std::size_t start = 0;
    for (;;) {
        const std::size_t dot = path.find('.', start);
        const std::string part = path.substr(start, dot - start);
        const bool last = dot == std::string::npos;
        if (node.IsSequence()) {
            std::size_t index = 0;
            try {
                index = std::stoul(part);
            } catch (const std::exception&) {
                Fail("set " + path, "'" + part + "' is no index of a list");
            }
            if (index >= node.size()) Fail("set " + path, "index " + part + " is past the list");
            if (last) {
                node[index] = value;
                return;
            }
            node.reset(node[index]);
        } else {
            if (last) {
                node[part] = value;
                return;
            }
            node.reset(node[part]);
        }
        start = dot + 1;
    }
}

void ApplySet(YAML::Node root, const std::string& assignment) {
    const std::size_t eq = assignment.find('=');
    if (eq == std::string::npos) Fail("--set " + assignment, "expected PATH=VALUE");
    SetPath(root, assignment.substr(0, eq), YAML::Load(assignment.substr(eq + 1)));
}

RetryLayer ParseLayer(const YAML::Node& node, const std::string& where) {
    RetryLayer layer;
    if (node.IsScalar() && node.as<std::string>() == "sdk") return layer;
    CheckKeys(node, where,
              {"max_retries", "backoff", "base_ms", "cap_ms", "respect_should_retry",
               "send_retry_count"});
    layer.max_retries = Read(node, "max_retries", layer.max_retries, where);
    const std::string backoff = Read<std::string>(node, "backoff", "stainless", where);
    if (backoff == "stainless") {
        layer.backoff = RetryLayer::Backoff::kStainless;
    } else if (backoff == "exponential") {
        layer.backoff = RetryLayer::Backoff::kExponential;
    } else if (backoff == "none") {
        layer.backoff = RetryLayer::Backoff::kNone;
    } else {
        Fail(where, "backoff must be stainless, exponential or none");
    }
    layer.base_ms = Read(node, "base_ms", layer.base_ms, where);
    layer.cap_ms = Read(node, "cap_ms", layer.cap_ms, where);
    layer.respect_should_retry =
        Read(node, "respect_should_retry", layer.respect_should_retry, where);
    layer.send_retry_count = Read(node, "send_retry_count", layer.send_retry_count, where);
    return layer;
}

ClientSpec ParseClient(const YAML::Node& node, const std::string& where) {
    CheckKeys(node, where,
              {"name", "model", "direct", "lane", "rate_per_s", "arrival", "start_s", "stop_s",
               "burst", "input_tokens", "max_tokens", "stream", "deadline_ms", "layers"});
    ClientSpec c;
    c.name = Read<std::string>(node, "name", "", where);
    c.model = Read<std::string>(node, "model", "", where);
    c.direct = Read<std::string>(node, "direct", "", where);
    if (c.model.empty() == c.direct.empty()) Fail(where, "give either 'model' or 'direct'");
    c.lane = Read<std::string>(node, "lane", "", where);
    c.rate_per_s = Read(node, "rate_per_s", c.rate_per_s, where);
    const std::string arrival = Read<std::string>(node, "arrival", "poisson", where);
    if (arrival != "poisson" && arrival != "uniform") Fail(where, "arrival: poisson or uniform");
    c.poisson = arrival == "poisson";
    c.start_s = Read(node, "start_s", c.start_s, where);
    if (node["stop_s"]) c.stop_s = Read(node, "stop_s", 0.0, where);
    c.burst = Read(node, "burst", c.burst, where);
    c.input_tokens = Read(node, "input_tokens", c.input_tokens, where);
    c.max_tokens = Read(node, "max_tokens", c.max_tokens, where);
    c.stream = Read(node, "stream", c.stream, where);
    if (node["deadline_ms"]) c.deadline_ms = Read(node, "deadline_ms", 0, where);
    if (c.rate_per_s <= 0 && c.burst <= 0) Fail(where, "rate_per_s must be > 0");
    if (const YAML::Node layers = node["layers"]) {
        if (!layers.IsSequence()) Fail(where, "layers must be a list");
        for (std::size_t i = 0; i < layers.size(); ++i) {
            c.layers.push_back(ParseLayer(layers[i], fmt::format("{}.layers.{}", where, i)));
        }
    }
    return c;
}

ProviderModel ParseProvider(const YAML::Node& node, const std::string& where) {
    CheckKeys(node, where, {"latency_ms", "limits", "max_concurrency", "faults"});
    ProviderModel p;
    if (const YAML::Node latency = node["latency_ms"]) {
        CheckKeys(latency, where + ".latency_ms", {"median", "p99"});
        p.latency.median_ms = Read(latency, "median", p.latency.median_ms, where);
        p.latency.p99_ms = Read(latency, "p99", p.latency.median_ms, where);
    }
    p.limits = Read<std::string>(node, "limits", "", where);
    if (!p.limits.empty()) {
        const mock::ParsedRateLimits limits = mock::ParseRateLimitSpec(p.limits);
        if (!limits.ok()) Fail(where, "limits: " + limits.error);
    }
    p.max_concurrency = Read(node, "max_concurrency", 0, where);
    if (const YAML::Node faults = node["faults"]) {
        for (std::size_t i = 0; i < faults.size(); ++i) {
            const std::string at = fmt::format("{}.faults.{}", where, i);
            CheckKeys(faults[i], at, {"from_s", "to_s", "fault"});
            TimedFault fault;
            fault.from_s = Read(faults[i], "from_s", fault.from_s, at);
            fault.to_s = Read(faults[i], "to_s", fault.to_s, at);
            fault.text = Read<std::string>(faults[i], "fault", "", at);
            const mock::ParsedFaultSpec spec = mock::ParseFaultSpec(fault.text);
            if (!spec.ok()) Fail(at, "fault: " + spec.error);
            fault.spec = spec.spec;
            p.faults.push_back(std::move(fault));
        }
    }
    return p;
}

Scenario ParseScenario(const YAML::Node& root, const std::string& file) {
    CheckKeys(root, file,
              {"name", "kind", "duration_s", "seed", "runs", "timeline_s", "gateway", "providers",
               "clients", "contention", "variants", "sweep"});
    Scenario s;
    s.name = Read<std::string>(root, "name", "", file);
    s.kind = Read<std::string>(root, "kind", s.kind, file);
    if (s.kind != "gateway" && s.kind != "contention") Fail(file, "kind: gateway or contention");
    s.duration_s = Read(root, "duration_s", s.duration_s, file);
    s.seed = Read(root, "seed", s.seed, file);
    s.runs = Read(root, "runs", s.runs, file);
    s.timeline_s = Read(root, "timeline_s", s.timeline_s, file);
    if (s.kind == "contention") {
        const YAML::Node c = root["contention"];
        if (!c) Fail(file, "a contention scenario needs 'contention'");
        const std::string where = file + ": contention";
        CheckKeys(c, where, {"clients", "strategies", "base_ms", "cap_ms", "repetitions"});
        s.contention.clients = Read(c, "clients", s.contention.clients, where);
        s.contention.strategies = Read(c, "strategies", s.contention.strategies, where);
        s.contention.base_ms = Read(c, "base_ms", s.contention.base_ms, where);
        s.contention.cap_ms = Read(c, "cap_ms", s.contention.cap_ms, where);
        s.contention.repetitions = Read(c, "repetitions", s.contention.repetitions, where);
        return s;
    }
    const YAML::Node gateway = root["gateway"];
    if (!gateway) Fail(file, "a gateway scenario needs 'gateway' (a Switchyard config)");
    YAML::Emitter out;
    out << gateway;
    s.gateway_yaml = out.c_str();
    if (const YAML::Node providers = root["providers"]) {
        for (const auto& entry : providers) {
            const std::string name = entry.first.as<std::string>();
            s.providers[name] = ParseProvider(entry.second, file + ": providers." + name);
        }
    }
    const YAML::Node clients = root["clients"];
    if (!clients || !clients.IsSequence() || clients.size() == 0) {
        Fail(file, "'clients' must list at least one client");
    }
    for (std::size_t i = 0; i < clients.size(); ++i) {
        s.clients.push_back(ParseClient(clients[i], fmt::format("{}: clients.{}", file, i)));
        if (s.clients.back().name.empty()) s.clients.back().name = fmt::format("client{}", i);
    }
    return s;
}

std::string Scalar(const YAML::Node& node) {
    if (node.IsScalar()) return node.as<std::string>();
    YAML::Emitter out;
    out << YAML::Flow << node;
    return out.c_str();
}

}  // namespace

std::vector<RunSpec> LoadScenario(const std::string& path, const std::vector<std::string>& sets) {
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
        Fail(path, e.what());
    }
    for (const std::string& set : sets) ApplySet(root, set);
    struct Variant {
        std::string name;
        YAML::Node set;
    };
    std::vector<Variant> variants;
    if (const YAML::Node list = root["variants"]) {
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string where = fmt::format("{}: variants.{}", path, i);
            CheckKeys(list[i], where, {"name", "set"});
            variants.push_back({Read<std::string>(list[i], "name", "", where), list[i]["set"]});
            if (variants.back().name.empty()) Fail(where, "a variant needs a name");
        }
    } else {
        variants.push_back({"", YAML::Node()});
    }
    std::string sweep_path;
    std::vector<YAML::Node> sweep_values{YAML::Node()};
    std::vector<std::string> sweep_labels;
    if (const YAML::Node sweep = root["sweep"]) {
        CheckKeys(sweep, path + ": sweep", {"path", "values", "labels"});
        sweep_path = Read<std::string>(sweep, "path", "", path + ": sweep");
        sweep_values.clear();
        for (const auto& value : sweep["values"]) sweep_values.push_back(value);
        if (sweep_path.empty() || sweep_values.empty()) {
            Fail(path + ": sweep", "needs a path and values");
        }
        sweep_labels = Read(sweep, "labels", sweep_labels, path + ": sweep");
        if (!sweep_labels.empty() && sweep_labels.size() != sweep_values.size()) {
            Fail(path + ": sweep", "needs as many labels as values");
        }
    }
    std::vector<RunSpec> runs;
    for (const Variant& variant : variants) {
        for (std::size_t v = 0; v < sweep_values.size(); ++v) {
            const YAML::Node& value = sweep_values[v];
            YAML::Node copy = YAML::Clone(root);
            copy.remove("variants");
            copy.remove("sweep");
            if (variant.set) {
                for (const auto& entry : variant.set) {
                    SetPath(copy, entry.first.as<std::string>(), YAML::Clone(entry.second));
                }
            }
            if (!sweep_path.empty()) SetPath(copy, sweep_path, YAML::Clone(value));
            const std::string label = sweep_path.empty()     ? ""
                                      : sweep_labels.empty() ? Scalar(value)
                                                             : sweep_labels[v];
            runs.push_back({variant.name, label, ParseScenario(copy, path)});
        }
    }
    return runs;
}

}  // namespace switchyard::sim
