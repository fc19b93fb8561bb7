#include "tune/config_features.h"

#include <cmath>
#include <limits>

#include "support/error.h"

namespace anvil::tune {

int FeatureLayout::add(const std::string& key, int columns) {
    auto [it, inserted] = first_column_.emplace(key, width_);
    if (inserted) width_ += columns;
    return it->second;
}

ConfigFeaturizer::ConfigFeaturizer(FeatureLayout& layout, const te::ConfigSpace& space,
                                   const TaskFeatures& task) {
    for (const auto& k : space.knobs) {
        KnobColumns kc{layout.add_knob(k.name), {}, {}};
        const size_t n = k.choices.size();
        for (size_t i = 0; i < n; ++i) {
            kc.scaled_index.push_back(n > 1 ? static_cast<float>(i) / (n - 1) : 0.0f);
            // Values are factors and widths (log2 makes 4 -> 8 as far as 8 -> 16) but may be 0
            // or an alternative's index; the signed log of 1 + |v| keeps every value finite.
            const double v = static_cast<double>(k.choices[i]);
            kc.log2_value.push_back(
                static_cast<float>(std::copysign(std::log2(1 + std::abs(v)), v)));
        }
        knobs_.push_back(std::move(kc));
    }
    for (const auto& [name, value] : task) {
        task_.emplace_back(layout.add_task_feature(name), static_cast<float>(value));
    }
}

void ConfigFeaturizer::append(const Config& c, int width, std::vector<float>& rows) const {
    ANVIL_CHECK(c.choice.size() == knobs_.size()) << c.choice.size() << " knobs";
    const size_t row = rows.size();
    rows.resize(row + width, std::numeric_limits<float>::quiet_NaN());
    float* f = rows.data() + row;
    for (size_t k = 0; k < knobs_.size(); ++k) {
        const auto& kc = knobs_[k];
        ANVIL_CHECK(kc.column + 1 < width) << "a row narrower than the task's columns";
        f[kc.column] = kc.scaled_index[c.choice[k]];
        f[kc.column + 1] = kc.log2_value[c.choice[k]];
    }
    for (const auto& [column, value] : task_) {
        ANVIL_CHECK(column < width) << "a row narrower than the task's columns";
        f[column] = value;
    }
}

}  // namespace anvil::tune
