#include "routing/residency.h"

#include <algorithm>
#include <cctype>

#include "core/names.h"

namespace switchyard::routing {

Regions Narrow(Regions allowed, const std::vector<std::string>& constraint) {
    if (constraint.empty()) return allowed;
    if (!allowed) return constraint;
    std::vector<std::string> both;
    for (const std::string& region : *allowed) {
        if (std::find(constraint.begin(), constraint.end(), region) != constraint.end()) {
            both.push_back(region);
        }
    }
    return both;
}

bool Admits(const Regions& allowed, const config::Deployment& deployment) {
    if (!allowed) return true;
    return std::find(allowed->begin(), allowed->end(), deployment.region) != allowed->end();
}

std::string Describe(const std::vector<std::string>& regions) {
    if (regions.empty()) return "none";
    std::string out;
    for (const std::string& region : regions) {
        if (!out.empty()) out += ", ";
        out += region;
    }
    return out;
}

std::optional<std::vector<std::string>> ParseRegions(std::string_view text) {
    std::vector<std::string> regions;
    while (true) {
        const std::size_t comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t'))
            item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        std::string region(item);
        std::transform(region.begin(), region.end(), region.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (!core::IsRegionName(region)) return std::nullopt;
        if (std::find(regions.begin(), regions.end(), region) == regions.end()) {
            regions.push_back(std::move(region));
        }
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return regions;
}

}  // namespace switchyard::routing
