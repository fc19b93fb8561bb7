// Proposals ranked by a gradient-boosted cost model (TVM's XGBTuner).
//
// After each update that leaves at least kMinTrain measured points (the task's own, plus the
// other tasks' when a TuningHistory is shared: tuning_history.h), the model is trained again on
// all of them. A batch is then the best-predicted fresh configurations of a candidate pool, each
// slot with probability kEpsilon a uniformly random one instead (the model is only as good as
// the corners it has seen). Until the model exists, proposals are random.
//
// The pool: a space of at most kEnumerateLimit configurations is scored whole. A larger one is
// searched under the model, as Ansor's evolutionary search does: kRandomPool random fresh
// configurations, then kSearchRounds rounds in which the kParents best-predicted ones and the
// best measured ones each give kMutantsPerParent mutants (one or two knobs changed), which are
// scored and join the pool. That is about 2,500 predictions in five XGBoost calls whatever the
// space's size, a few milliseconds; TVM's simulated annealing makes 500 sequential rounds.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include "tune/config_features.h"
#include "tune/tuner_base.h"
#include "tune/tuners.h"
#include "tune/tuning_history.h"
#include "tune/xgb_cost_model.h"

namespace anvil::tune {

namespace {

constexpr size_t kMinTrain = 16;
constexpr double kEpsilon = 0.05;
constexpr int64_t kEnumerateLimit = 2048;
constexpr int kRandomPool = 512;
constexpr int kSearchRounds = 4;
constexpr size_t kParents = 32;
constexpr size_t kMeasuredParents = 8;
constexpr int kMutantsPerParent = 12;
// History points a training uses at most, spread over the other tasks.
constexpr size_t kMaxHistoryPoints = 2048;

class XgbTuner final : public TunerBase {
public:
    XgbTuner(const te::ConfigSpace& space, uint64_t seed, TransferOptions transfer)
        : TunerBase(space, seed),
          transfer_(std::move(transfer)),
          model_(CostObjective::rank, seed),
          featurizer_(layout_, space, transfer_.task_features) {
        // With history the model can rank this task's configurations before measuring any.
        retrain();
    }

private:
    void propose(int n, std::vector<Config>& out) override {
        if (!model_.trained()) return;
        const std::vector<Config> ranked = search();
        const size_t want = out.size() + static_cast<size_t>(n);
        size_t next = 0;
        while (out.size() < want) {
            if (rng().unit() < kEpsilon) {
                auto c = draw_fresh();
                if (!c) return;
                take(*c, out);
                continue;
            }
            // A candidate an epsilon pick already took is skipped.
            while (next < ranked.size() && !take(ranked[next], out)) ++next;
            if (next == ranked.size()) return;  // TunerBase fills the rest at random
        }
    }

    void on_measured(const std::vector<Config>& configs,
                     const std::vector<double>& costs) override {
        configs_.insert(configs_.end(), configs.begin(), configs.end());
        costs_.insert(costs_.end(), costs.begin(), costs.end());
        if (transfer_.history) {
            transfer_.history->add(transfer_.task, transfer_.task_features, space(), configs,
                                   costs);
        }
        retrain();
    }

    void retrain() {
        std::vector<TuningHistory::Task> others;
        if (transfer_.history) others = transfer_.history->tasks_except(transfer_.task);
        size_t history_points = 0;
        for (const auto& t : others) history_points += t.configs.size();
        if (configs_.size() + history_points < kMinTrain) return;

        // The other tasks' names extend a copy of this task's layout: this task's columns stay
        // where predict() puts them.
        FeatureLayout layout = layout_;
        std::vector<ConfigFeaturizer> featurizers;
        for (const auto& t : others) featurizers.emplace_back(layout, t.space, t.features);
        const int width = layout.width();
        if (width == 0) return;  // a space without knobs has one configuration

        std::vector<float> rows;
        std::vector<double> costs;
        std::vector<unsigned> groups;
        for (size_t i = 0; i < configs_.size(); ++i) featurizer_.append(configs_[i], width, rows);
        costs = costs_;
        if (!configs_.empty()) groups.push_back(static_cast<unsigned>(configs_.size()));
        for (size_t t = 0; t < others.size(); ++t) {
            // Every other task keeps its share of kMaxHistoryPoints, by stride over its points.
            const size_t n = others[t].configs.size();
            const size_t keep = history_points <= kMaxHistoryPoints
                                    ? n
                                    : std::max<size_t>(1, n * kMaxHistoryPoints / history_points);
            if (n == 0) continue;
            for (size_t j = 0; j < keep; ++j) {
                const size_t i = j * n / keep;
                featurizers[t].append(others[t].configs[i], width, rows);
                costs.push_back(others[t].costs[i]);
            }
            groups.push_back(static_cast<unsigned>(keep));
        }
        model_.train(rows, width, costs, groups);
    }

    std::vector<float> predict(const std::vector<Config>& configs) const {
        std::vector<float> rows;
        rows.reserve(configs.size() * model_.width());
        for (const auto& c : configs) featurizer_.append(c, model_.width(), rows);
        return model_.predict(rows);
    }

    // Fresh configurations, best predicted first.
    std::vector<Config> search() {
        std::vector<Config> pool;
        std::vector<float> scores;
        if (space().size() <= kEnumerateLimit) {
            Config c = config_at(space(), 0);
            do {
                if (!was_proposed(c)) pool.push_back(c);
            } while (next_in_index_order(space(), c));
            scores = predict(pool);
        } else {
            search_pool(pool, scores);
        }
        std::vector<size_t> order(pool.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return scores[a] > scores[b]; });
        std::vector<Config> ranked;
        ranked.reserve(order.size());
        for (size_t i : order) ranked.push_back(std::move(pool[i]));
        return ranked;
    }

    void search_pool(std::vector<Config>& pool, std::vector<float>& scores) {
        std::unordered_set<Config, ConfigHash> seen;
        auto add = [&](Config c) {
            if (!was_proposed(c) && seen.insert(c).second) pool.push_back(std::move(c));
        };
        for (int i = 0; i < kRandomPool; ++i) add(draw_any());
        scores = predict(pool);

        const std::vector<Config> measured = best_measured();
        for (int round = 0; round < kSearchRounds; ++round) {
            std::vector<size_t> top(pool.size());
            std::iota(top.begin(), top.end(), 0);
            const size_t k = std::min(kParents, top.size());
            std::partial_sort(top.begin(), top.begin() + k, top.end(), [&](size_t a, size_t b) {
                return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
            });
            std::vector<Config> parents;
            for (size_t i = 0; i < k; ++i) parents.push_back(pool[top[i]]);
            parents.insert(parents.end(), measured.begin(), measured.end());

            const size_t before = pool.size();
            for (const auto& p : parents) {
                for (int m = 0; m < kMutantsPerParent; ++m) add(mutant(p));
            }
            if (pool.size() == before) break;
            const std::vector<Config> fresh(pool.begin() + before, pool.end());
            const std::vector<float> s = predict(fresh);
            scores.insert(scores.end(), s.begin(), s.end());
        }
    }

    // The fastest configurations measured, as parents for the search.
    std::vector<Config> best_measured() const {
        std::vector<size_t> order;
        for (size_t i = 0; i < costs_.size(); ++i) {
            if (std::isfinite(costs_[i])) order.push_back(i);
        }
        const size_t k = std::min(kMeasuredParents, order.size());
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](size_t a, size_t b) {
            return costs_[a] < costs_[b] || (costs_[a] == costs_[b] && a < b);
        });
        std::vector<Config> out;
        for (size_t i = 0; i < k; ++i) out.push_back(configs_[order[i]]);
        return out;
    }

    // `c` with one knob changed (two, half the time): a neighbouring choice or any other.
    Config mutant(Config c) {
        const auto knobs = static_cast<int64_t>(c.choice.size());
        const int changes = rng().below(2) ? 2 : 1;
        for (int i = 0; i < changes; ++i) {
            const auto k = static_cast<size_t>(rng().below(knobs));
            const auto n = static_cast<int>(space().knobs[k].choices.size());
            if (n < 2) continue;
            int& choice = c.choice[k];
            if (rng().below(2)) {
                choice = std::clamp(choice + (rng().below(2) ? 1 : -1), 0, n - 1);
            } else {
                const int other = static_cast<int>(rng().below(n - 1));
                choice = other >= choice ? other + 1 : other;
            }
        }
        return c;
    }

    TransferOptions transfer_;
    XgbCostModel model_;
    FeatureLayout layout_;  // this task's columns; other tasks' are added to copies
    ConfigFeaturizer featurizer_;
    std::vector<Config> configs_;  // measured, in order
    std::vector<double> costs_;
};

}  // namespace

std::unique_ptr<Tuner> make_xgb_tuner(const te::ConfigSpace& space, uint64_t seed,
                                      const TransferOptions& transfer) {
    return std::make_unique<XgbTuner>(space, seed, transfer);
}

}  // namespace anvil::tune
