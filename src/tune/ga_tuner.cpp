// A genetic algorithm over knob choices (TVM's GATuner), in its steady-state form: measurements
// arrive in batches of any size, and a batch's children come from the best configurations
// measured so far.
//
//   population  the kPopulation fastest configurations measured so far (failures never enter).
//               Elitism is complete: a configuration leaves the population only when enough
//               faster ones were found, never because a generation ended (TVM keeps only its
//               elite_num best across generations and can lose good parents to unlucky children).
//   selection   binary tournaments inside the population: the faster of two random members is a
//               parent, so a member's chance follows its rank, not its cost (costs of a task span
//               orders of magnitude and failures are +inf).
//   crossover   each knob's choice from one of the two parents, by a fair coin.
//   mutation    each knob, with probability max(kMutation, 1 / #knobs), moves to a neighbouring
//               choice (most knobs are ordered: split factors, vector widths) or, half the time,
//               to any other choice (loop orders are not).
// A child already proposed is bred again; until kMinParents configurations succeeded, and when
// breeding keeps producing known children (a nearly exhausted space), TunerBase fills the batch
// with fresh random ones.
#include <algorithm>
#include <cmath>

#include "tune/tuner_base.h"
#include "tune/tuners.h"

namespace anvil::tune {

namespace {

constexpr size_t kPopulation = 16;
constexpr size_t kMinParents = 4;
constexpr double kMutation = 0.1;
constexpr int kTriesPerChild = 64;

class GaTuner final : public TunerBase {
public:
    GaTuner(const te::ConfigSpace& space, uint64_t seed)
        : TunerBase(space, seed),
          mutation_(space.knobs.empty() ? kMutation
                                        : std::max(kMutation, 1.0 / space.knobs.size())) {}

private:
    struct Member {
        Config config;
        double cost;
    };

    void propose(int n, std::vector<Config>& out) override {
        if (population_.size() < kMinParents) return;
        const size_t want = out.size() + static_cast<size_t>(n);
        for (int tries = 0; out.size() < want && tries < n * kTriesPerChild; ++tries) {
            const Config& a = select();
            const Config& b = select();
            Config child = a;
            for (size_t k = 0; k < child.choice.size(); ++k) {
                if (rng().below(2)) child.choice[k] = b.choice[k];
                if (rng().unit() < mutation_) mutate(k, child.choice[k]);
            }
            take(child, out);
        }
    }

    void on_measured(const std::vector<Config>& configs,
                     const std::vector<double>& costs) override {
        for (size_t i = 0; i < configs.size(); ++i) {
            if (!std::isfinite(costs[i])) continue;
            // Stable: among equal costs the earlier measurement stays ahead.
            auto at = std::upper_bound(population_.begin(), population_.end(), costs[i],
                                       [](double cost, const Member& m) { return cost < m.cost; });
            population_.insert(at, Member{configs[i], costs[i]});
            if (population_.size() > kPopulation) population_.pop_back();
        }
    }

    const Config& select() {
        const auto n = static_cast<int64_t>(population_.size());
        // The population is sorted by cost: the smaller index wins the tournament.
        return population_[std::min(rng().below(n), rng().below(n))].config;
    }

    void mutate(size_t knob, int& choice) {
        const auto n = static_cast<int>(space().knobs[knob].choices.size());
        if (n < 2) return;
        if (rng().below(2)) {
            const int step = rng().below(2) ? 1 : -1;
            choice = std::clamp(choice + step, 0, n - 1);
        } else {
            // Any other choice: draw among n - 1 and skip the current one.
            const int other = static_cast<int>(rng().below(n - 1));
            choice = other >= choice ? other + 1 : other;
        }
    }

    double mutation_;
    std::vector<Member> population_;  // fastest first
};

}  // namespace

std::unique_ptr<Tuner> make_ga_tuner(const te::ConfigSpace& space, uint64_t seed) {
    return std::make_unique<GaTuner>(space, seed);
}

}  // namespace anvil::tune
