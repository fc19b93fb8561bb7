#include "tune/tuner.h"

#include <algorithm>
#include <set>

#include "support/error.h"
#include "tune/tuners.h"

namespace anvil::tune {

namespace {

int choice_index(const te::Knob& knob, int64_t value) {
    auto it = std::find(knob.choices.begin(), knob.choices.end(), value);
    return it == knob.choices.end() ? -1 : static_cast<int>(it - knob.choices.begin());
}

// A space comes from ScheduleConfig::define_knob, which keeps these; a tuner relies on them.
void check_space(const te::ConfigSpace& space) {
    std::set<std::string> names;
    for (const auto& k : space.knobs) {
        ANVIL_CHECK(names.insert(k.name).second) << "knob " << k.name << " declared twice";
        ANVIL_CHECK(choice_index(k, k.default_value) >= 0)
            << "knob " << k.name << ": the default is not one of its choices";
    }
}

}  // namespace

Config default_config(const te::ConfigSpace& space) {
    Config c;
    for (const auto& k : space.knobs) {
        const int i = choice_index(k, k.default_value);
        ANVIL_CHECK(i >= 0) << "knob " << k.name << ": the default is not one of its choices";
        c.choice.push_back(i);
    }
    return c;
}

te::KnobValues config_values(const te::ConfigSpace& space, const Config& c) {
    ANVIL_CHECK(c.choice.size() == space.knobs.size())
        << "a configuration of " << c.choice.size() << " knobs for a space of "
        << space.knobs.size();
    te::KnobValues values;
    for (size_t i = 0; i < c.choice.size(); ++i) {
        const auto& k = space.knobs[i];
        ANVIL_CHECK(c.choice[i] >= 0 && c.choice[i] < static_cast<int>(k.choices.size()))
            << "knob " << k.name << ": choice " << c.choice[i];
        values[k.name] = k.choices[c.choice[i]];
    }
    return values;
}

std::optional<Config> config_of_values(const te::ConfigSpace& space, const te::KnobValues& v) {
    // A name the space does not declare also means another space (records store every knob the
    // rule declared, ScheduleConfig::resolved).
    if (v.size() != space.knobs.size()) return std::nullopt;
    Config c;
    for (const auto& k : space.knobs) {
        auto it = v.find(k.name);
        if (it == v.end()) return std::nullopt;
        const int i = choice_index(k, it->second);
        if (i < 0) return std::nullopt;
        c.choice.push_back(i);
    }
    return c;
}

std::unique_ptr<Tuner> make_tuner(const std::string& kind, const te::ConfigSpace& space,
                                  uint64_t seed) {
    return make_tuner(kind, space, seed, TransferOptions{});
}

std::unique_ptr<Tuner> make_tuner(const std::string& kind, const te::ConfigSpace& space,
                                  uint64_t seed, const TransferOptions& transfer) {
    check_space(space);
    if (kind == "random") return make_random_tuner(space, seed);
    if (kind == "grid") return make_grid_tuner(space);
    if (kind == "ga") return make_ga_tuner(space, seed);
    if (kind == "xgb") return make_xgb_tuner(space, seed, transfer);
    user_error() << "unknown tuner '" << kind << "': expected xgb, ga, random or grid";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::tune
