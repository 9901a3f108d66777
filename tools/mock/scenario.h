#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fault_spec.h"

namespace switchyard::mock {

// One scenario rule: requests matching `model` and `path` (absent = any) get `fault`, for the
// rule's first `times` matches only when `times` is set.
struct ScenarioRule final {
    std::optional<std::string> model;
    std::optional<std::string> path;
    std::string fault_text;
    FaultSpec fault;
    std::optional<std::uint64_t> times;
};

// What a rule is looked up for: a request (a batch line included), or the creation of a batch.
// Rules with batch keys (FaultSpec::batch) serve batch creations only, all others requests only,
// so neither kind shadows the other or uses up its `times`.
enum class RuleScope { kRequest, kBatch };

// A loaded scenario: immutable rules plus a match counter per rule. Shared by all connections;
// Match is thread-safe.
class Scenario final {
  public:
    explicit Scenario(std::vector<ScenarioRule> rules);

    // Returns the first rule of `scope` that matches and still has matches left, consuming one of
    // them, or nullptr. The rule lives as long as the scenario.
    const ScenarioRule* Match(std::string_view model, std::string_view path,
                              RuleScope scope = RuleScope::kRequest) const;

    const std::vector<ScenarioRule>& rules() const { return rules_; }

  private:
    std::vector<ScenarioRule> rules_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> matches_;
};

// Result of ParseScenario: `error` is empty on success.
struct ParsedScenario final {
    std::shared_ptr<const Scenario> scenario;
    std::string error;

    bool ok() const { return error.empty(); }
};

// Parses `{"rules":[{"match":{"model":"m","path":"/p"},"fault":"<spec>","times":N}, ...]}`.
// Unknown fields, wrong types and invalid fault specs are rejected with the failing rule's index.
ParsedScenario ParseScenario(std::string_view json_text);

// The active scenario, replaced as a whole at runtime. Thread-safe; a request holds the snapshot
// it started with.
class ScenarioStore final {
  public:
    std::shared_ptr<const Scenario> Get() const;
    void Set(std::shared_ptr<const Scenario> scenario);

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<const Scenario> scenario_;
};

}  // namespace switchyard::mock
