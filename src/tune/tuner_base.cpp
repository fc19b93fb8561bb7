#include "tune/tuner_base.h"

#include <cmath>

#include "support/error.h"

namespace anvil::tune {

int64_t Rng::below(int64_t n) {
    ANVIL_CHECK(n > 0) << n;
    // Rejection keeps the draw uniform (a plain modulo favours small values).
    const uint64_t range = static_cast<uint64_t>(n);
    const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return static_cast<int64_t>(x % range);
}

double Rng::unit() {
    return static_cast<double>(engine_() >> 11) * 0x1.0p-53;
}

size_t ConfigHash::operator()(const Config& c) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the choice indices
    for (int v : c.choice) {
        h ^= static_cast<uint64_t>(static_cast<uint32_t>(v));
        h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
}

Config config_at(const te::ConfigSpace& space, int64_t index) {
    Config c;
    for (const auto& k : space.knobs) {
        const auto n = static_cast<int64_t>(k.choices.size());
        c.choice.push_back(static_cast<int>(index % n));
        index /= n;
    }
    return c;
}

bool next_in_index_order(const te::ConfigSpace& space, Config& c) {
    for (size_t i = 0; i < c.choice.size(); ++i) {
        if (++c.choice[i] < static_cast<int>(space.knobs[i].choices.size())) return true;
        c.choice[i] = 0;
    }
    return false;
}

TunerBase::TunerBase(const te::ConfigSpace& space, uint64_t seed)
    : space_(space), size_(space.size()), rng_(seed) {}

bool TunerBase::has_next() const {
    return proposed_count() < size_;
}

std::vector<Config> TunerBase::next_batch(int n) {
    std::vector<Config> out;
    if (n <= 0) return out;
    take(default_config(space_), out);
    if (static_cast<int>(out.size()) < n) propose(n - static_cast<int>(out.size()), out);
    ANVIL_CHECK(static_cast<int>(out.size()) <= n) << "a tuner proposed more than asked";
    while (static_cast<int>(out.size()) < n) {
        auto c = draw_fresh();
        if (!c) break;
        take(*c, out);
    }
    return out;
}

void TunerBase::update(const std::vector<Config>& configs, const std::vector<double>& costs) {
    ANVIL_CHECK(configs.size() == costs.size())
        << configs.size() << " configurations but " << costs.size() << " costs";
    for (const auto& c : configs) {
        // A resumed record is turned into a Config by config_of_values, which checks it; a
        // configuration outside the space here is the caller's bug.
        ANVIL_CHECK(c.choice.size() == space_.knobs.size())
            << "a configuration of " << c.choice.size() << " knobs for a space of "
            << space_.knobs.size();
        for (size_t i = 0; i < c.choice.size(); ++i) {
            ANVIL_CHECK(c.choice[i] >= 0 &&
                        c.choice[i] < static_cast<int>(space_.knobs[i].choices.size()))
                << "knob " << space_.knobs[i].name << ": choice " << c.choice[i];
        }
        proposed_.insert(c);
    }
    on_measured(configs, costs);
}

bool TunerBase::take(const Config& c, std::vector<Config>& out) {
    if (!proposed_.insert(c).second) return false;
    out.push_back(c);
    return true;
}

std::optional<Config> TunerBase::draw_fresh() {
    if (!has_next()) return std::nullopt;
    // Rejection is uniform and fast while most of the space is fresh; a nearly exhausted space
    // (only ever a small one: a large one takes more trials than any budget) is scanned.
    constexpr int kTries = 64;
    constexpr int64_t kScanLimit = int64_t{1} << 24;
    for (int i = 0; i < kTries || size_ > kScanLimit; ++i) {
        Config c = draw_any();
        if (!proposed_.contains(c)) return c;
    }
    int64_t skip = rng_.below(size_ - proposed_count());
    Config c = config_at(space_, 0);
    do {
        if (!proposed_.contains(c) && skip-- == 0) return c;
    } while (next_in_index_order(space_, c));
    internal_error() << "the proposed set and the space size disagree";
    ANVIL_UNREACHABLE();
}

Config TunerBase::draw_any() {
    Config c;
    c.choice.reserve(space_.knobs.size());
    for (const auto& k : space_.knobs) {
        c.choice.push_back(static_cast<int>(rng_.below(static_cast<int64_t>(k.choices.size()))));
    }
    return c;
}

}  // namespace anvil::tune
