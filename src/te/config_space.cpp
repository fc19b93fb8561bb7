#include "te/config_space.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "support/error.h"

namespace anvil::te {

int64_t ConfigSpace::size() const {
    int64_t n = 1;
    for (const auto& k : knobs) {
        const auto c = static_cast<int64_t>(k.choices.size());
        if (c > 0 && n > std::numeric_limits<int64_t>::max() / c) {
            return std::numeric_limits<int64_t>::max();
        }
        n *= c;
    }
    return n;
}

const Knob* ConfigSpace::find(const std::string& name) const {
    for (const auto& k : knobs) {
        if (k.name == name) return &k;
    }
    return nullptr;
}

int64_t ScheduleConfig::define_knob(const std::string& name, std::vector<int64_t> choices,
                                    int64_t default_value) {
    ANVIL_CHECK(std::find(choices.begin(), choices.end(), default_value) != choices.end())
        << "knob " << name << ": the default " << default_value << " is not one of its choices";
    if (const Knob* known = space_.find(name)) {
        // A rule may ask twice for the same choice (two stages share it); the same declaration.
        ANVIL_CHECK(known->choices == choices && known->default_value == default_value)
            << "knob " << name << " declared twice with different choices";
    } else {
        space_.knobs.push_back({name, std::move(choices), default_value});
    }
    const Knob& knob = *space_.find(name);
    auto it = values_.find(name);
    if (it == values_.end()) return knob.default_value;
    if (std::find(knob.choices.begin(), knob.choices.end(), it->second) == knob.choices.end()) {
        user_error() << "schedule configuration: knob " << name << " = " << it->second
                     << " is not one of its choices for this workload";
    }
    return it->second;
}

int64_t ScheduleConfig::define_split(const std::string& name, int64_t extent, int64_t max_factor,
                                     int64_t default_factor) {
    std::vector<int64_t> choices;
    for (int64_t f = 1; f <= std::min(extent, max_factor); ++f) {
        if (extent % f == 0 || f == default_factor) choices.push_back(f);
    }
    if (std::find(choices.begin(), choices.end(), default_factor) == choices.end()) {
        choices.push_back(default_factor);
    }
    return define_knob(name, std::move(choices), default_factor);
}

bool ScheduleConfig::define_flag(const std::string& name, bool default_value) {
    return define_knob(name, {0, 1}, default_value ? 1 : 0) != 0;
}

KnobValues ScheduleConfig::resolved() const {
    KnobValues all;
    for (const auto& k : space_.knobs) {
        auto it = values_.find(k.name);
        all[k.name] = it == values_.end() ? k.default_value : it->second;
    }
    return all;
}

std::string knob_values_str(const KnobValues& values) {
    std::string text;
    for (const auto& [name, value] : values) {
        text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
    }
    return text;
}

KnobValues parse_knob_values(const std::string& text) {
    KnobValues values;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (item.empty()) continue;
        size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0) {
            user_error() << "knob values: '" << item << "' is not name=value";
        }
        std::string name = item.substr(0, eq);
        std::string number = item.substr(eq + 1);
        size_t used = 0;
        int64_t value = 0;
        try {
            value = std::stoll(number, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != number.size()) {
            user_error() << "knob values: '" << number << "' (knob " << name
                         << ") is not an integer";
        }
        values[name] = value;
    }
    return values;
}

}  // namespace anvil::te
