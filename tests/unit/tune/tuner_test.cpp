#include "tune/tuner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "support/error.h"
#include "tune/tuning_history.h"

namespace anvil::tune {
namespace {

const std::vector<std::string> kTuners = {"random", "grid", "ga", "xgb"};

// Knobs with `n` choices each, the choices powers of two (as split factors are) and the default
// somewhere inside, not the first choice, so "default first" is not "index 0 first".
te::ConfigSpace space_of(const std::vector<int>& counts) {
    te::ConfigSpace space;
    for (size_t k = 0; k < counts.size(); ++k) {
        te::Knob knob{"knob" + std::to_string(k), {}, 0};
        for (int i = 0; i < counts[k]; ++i) knob.choices.push_back(int64_t{1} << i);
        knob.default_value = knob.choices[counts[k] / 2];
        space.knobs.push_back(knob);
    }
    return space;
}

using CostFn = std::function<double(const Config&)>;

struct TuneRun {
    std::vector<Config> proposed;
    std::vector<double> costs;
};

// Proposes and "measures" in batches until `budget` configurations or the space runs out.
TuneRun run_tuner(Tuner& tuner, const CostFn& cost, int budget, int batch = 8) {
    TuneRun run;
    while (tuner.has_next() && static_cast<int>(run.proposed.size()) < budget) {
        auto configs =
            tuner.next_batch(std::min(batch, budget - static_cast<int>(run.proposed.size())));
        EXPECT_FALSE(configs.empty()) << "has_next but an empty batch";
        if (configs.empty()) break;
        std::vector<double> costs;
        for (const auto& c : configs) costs.push_back(cost(c));
        tuner.update(configs, costs);
        run.proposed.insert(run.proposed.end(), configs.begin(), configs.end());
        run.costs.insert(run.costs.end(), costs.begin(), costs.end());
    }
    return run;
}

// A separable bowl: 1 at `center` (a choice index per knob), growing with the squared distance.
CostFn bowl(std::vector<int> center) {
    return [center](const Config& c) {
        double cost = 1.0;
        for (size_t k = 0; k < c.choice.size(); ++k) {
            const double d = c.choice[k] - center[k];
            cost += 0.1 * (k + 1) * d * d;
        }
        return cost;
    };
}

TEST(ConfigValues, RoundTripEveryConfiguration) {
    te::ConfigSpace space = space_of({3, 4, 2});
    EXPECT_EQ(config_values(space, default_config(space)),
              (te::KnobValues{{"knob0", 2}, {"knob1", 4}, {"knob2", 2}}));
    auto grid = make_tuner("grid", space, 0);
    auto all = grid->next_batch(100);
    ASSERT_EQ(all.size(), 24u);
    for (const auto& c : all) {
        auto back = config_of_values(space, config_values(space, c));
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(*back, c);
    }
}

TEST(ConfigValues, RejectsValuesOfAnotherSpace) {
    te::ConfigSpace space = space_of({3, 4});
    EXPECT_TRUE(config_of_values(space, {{"knob0", 4}, {"knob1", 8}}).has_value());
    EXPECT_FALSE(
        config_of_values(space, {{"knob0", 3}, {"knob1", 8}}).has_value());  // not a choice
    EXPECT_FALSE(config_of_values(space, {{"knob0", 4}}).has_value());       // missing
    EXPECT_FALSE(config_of_values(space, {{"knob0", 4}, {"knob1", 8}, {"other", 1}}).has_value());
    EXPECT_THROW(config_values(space, Config{{0, 4}}), InternalError);  // index out of range
}

TEST(MakeTuner, UnknownKindNamesTheKnownOnes) {
    try {
        make_tuner("annealing", space_of({2}), 0);
        FAIL() << "no error";
    } catch (const UserError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("'annealing'"), std::string::npos) << what;
        for (const auto& kind : kTuners) EXPECT_NE(what.find(kind), std::string::npos) << what;
    }
}

// Every tuner: the default first, no repeats, and a small space exactly exhausted. 5 x 8 is big
// enough for the xgb tuner to train its model before the end.
TEST(Tuners, DefaultFirstNoRepeatsExhaustSmallSpaces) {
    for (const auto& counts : {std::vector<int>{3, 4}, std::vector<int>{5, 8}}) {
        te::ConfigSpace space = space_of(counts);
        for (const auto& kind : kTuners) {
            SCOPED_TRACE(kind + " on " + std::to_string(space.size()) + " configurations");
            auto tuner = make_tuner(kind, space, 7);
            TuneRun run = run_tuner(*tuner, bowl({1, 2}), 1000, 5);
            ASSERT_FALSE(run.proposed.empty());
            EXPECT_EQ(run.proposed[0], default_config(space));
            std::set<std::vector<int>> distinct;
            for (const auto& c : run.proposed) distinct.insert(c.choice);
            EXPECT_EQ(distinct.size(), run.proposed.size()) << "a configuration twice";
            EXPECT_EQ(static_cast<int64_t>(run.proposed.size()), space.size());
            EXPECT_FALSE(tuner->has_next());
            EXPECT_TRUE(tuner->next_batch(4).empty());
        }
    }
}

TEST(Tuners, SpaceWithoutKnobsHasOnlyTheDefault) {
    for (const auto& kind : kTuners) {
        auto tuner = make_tuner(kind, te::ConfigSpace{}, 1);
        auto batch = tuner->next_batch(8);
        ASSERT_EQ(batch.size(), 1u) << kind;
        EXPECT_TRUE(batch[0].choice.empty());
        tuner->update(batch, {1.0});
        EXPECT_FALSE(tuner->has_next()) << kind;
    }
}

TEST(Tuners, ResumedRecordsAreNeverProposedAgain) {
    te::ConfigSpace space = space_of({3, 4});
    for (const auto& kind : kTuners) {
        SCOPED_TRACE(kind);
        auto tuner = make_tuner(kind, space, 3);
        // Resumed before the first batch: the default among them, so it is not proposed again.
        std::vector<Config> resumed = {default_config(space), Config{{0, 0}}, Config{{2, 3}}};
        tuner->update(resumed, {2.0, std::numeric_limits<double>::infinity(), 1.5});
        TuneRun run = run_tuner(*tuner, bowl({0, 1}), 100, 4);
        EXPECT_EQ(run.proposed.size(), 9u);
        for (const auto& c : run.proposed) {
            EXPECT_EQ(std::count(resumed.begin(), resumed.end(), c), 0);
        }
        EXPECT_FALSE(tuner->has_next());
    }
}

TEST(Tuners, UpdateChecksItsArguments) {
    auto tuner = make_tuner("ga", space_of({3, 4}), 0);
    EXPECT_THROW(tuner->update({Config{{0, 0}}}, {}), InternalError);
    EXPECT_THROW(tuner->update({Config{{0}}}, {1.0}), InternalError);
    EXPECT_THROW(tuner->update({Config{{3, 0}}}, {1.0}), InternalError);
}

TEST(GridTuner, DefaultThenIndexOrder) {
    te::ConfigSpace space = space_of({3, 2});  // default {1, 1}
    auto tuner = make_tuner("grid", space, 0);
    std::vector<Config> expected = {{{1, 1}}, {{0, 0}}, {{1, 0}}, {{2, 0}}, {{0, 1}}, {{2, 1}}};
    EXPECT_EQ(tuner->next_batch(3), std::vector<Config>(expected.begin(), expected.begin() + 3));
    EXPECT_EQ(tuner->next_batch(10), std::vector<Config>(expected.begin() + 3, expected.end()));
}

TEST(Tuners, DeterministicBySeed) {
    te::ConfigSpace space = space_of({8, 8, 8, 8});
    CostFn cost = bowl({6, 1, 5, 2});
    for (const auto& kind : kTuners) {
        SCOPED_TRACE(kind);
        auto a = make_tuner(kind, space, 11);
        auto b = make_tuner(kind, space, 11);
        auto c = make_tuner(kind, space, 12);
        TuneRun ra = run_tuner(*a, cost, 64);
        TuneRun rb = run_tuner(*b, cost, 64);
        TuneRun rc = run_tuner(*c, cost, 64);
        EXPECT_EQ(ra.proposed, rb.proposed);
        if (kind != "grid") {
            EXPECT_NE(ra.proposed, rc.proposed);
        }
    }
}

// How many configurations of the space are strictly faster than `best`.
int64_t rank_of(const te::ConfigSpace& space, const CostFn& cost, double best) {
    auto grid = make_tuner("grid", space, 0);
    int64_t faster = 0;
    for (const auto& c : grid->next_batch(static_cast<int>(space.size()))) faster += cost(c) < best;
    return faster;
}

double best_of(const TuneRun& run) {
    return *std::min_element(run.costs.begin(), run.costs.end());
}

// GA and xgb against random on a 4096-configuration bowl (some corner failing), 120 proposals:
// random's best of 120 is about the 34th of 4096 on average; the searches must do clearly better.
TEST(Tuners, SearchesFindTheOptimumOfABowl) {
    te::ConfigSpace space = space_of({8, 8, 8, 8});
    std::map<std::string, std::vector<int64_t>> ranks;
    for (uint64_t seed = 0; seed < 8; ++seed) {
        std::vector<int> center = {int(seed % 8), int((seed * 3 + 1) % 8), int((seed * 5 + 2) % 8),
                                   int((seed * 7 + 5) % 8)};
        CostFn smooth = bowl(center);
        CostFn cost = [&](const Config& c) {
            // Failing corner (a build error, say) away from the optimum.
            if (c.choice[0] == (center[0] + 4) % 8 && c.choice[1] == (center[1] + 4) % 8) {
                return std::numeric_limits<double>::infinity();
            }
            return smooth(c);
        };
        for (const std::string kind : {"random", "ga", "xgb"}) {
            auto tuner = make_tuner(kind, space, seed);
            TuneRun run = run_tuner(*tuner, cost, 120);
            ranks[kind].push_back(rank_of(space, cost, best_of(run)));
        }
    }
    auto summary = [&](const std::string& kind) {
        std::string s;
        for (auto r : ranks[kind]) s += std::to_string(r) + " ";
        return s;
    };
    auto count_within = [&](const std::string& kind, int64_t rank) {
        return std::count_if(ranks[kind].begin(), ranks[kind].end(),
                             [&](int64_t r) { return r <= rank; });
    };
    std::cout << "ranks of the best found (0 = the optimum):\n  random " << summary("random")
              << "\n  ga     " << summary("ga") << "\n  xgb    " << summary("xgb") << "\n";
    auto mean = [&](const std::string& kind) {
        double sum = 0;
        for (auto r : ranks[kind]) sum += static_cast<double>(r);
        return sum / ranks[kind].size();
    };
    // The best 1% is 41 configurations, where random's best of 120 usually is too: the searches
    // must reach the best ten (GA) and the optimum itself (xgb) in most seeds, and be on average
    // several times closer to it than random.
    EXPECT_GE(count_within("ga", 10), 6) << summary("ga");
    EXPECT_GE(count_within("xgb", 0), 6) << summary("xgb");
    EXPECT_LT(mean("ga") * 4, mean("random")) << summary("ga") << "/ " << summary("random");
    EXPECT_LT(mean("xgb") * 4, mean("random")) << summary("xgb") << "/ " << summary("random");
}

// A 10^6-configuration space: proposals stay fast and still find good configurations.
TEST(XgbTuner, LargeSpaceProposalsAreFast) {
    te::ConfigSpace space = space_of({10, 10, 10, 10, 10, 10});
    std::vector<int> center = {7, 2, 9, 4, 1, 6};
    CostFn cost = [&](const Config& c) {
        double s = 1.0;
        for (size_t k = 0; k < 6; ++k) s += 0.05 * (k + 1) * std::pow(c.choice[k] - center[k], 2);
        return s;
    };
    auto tuner = make_tuner("xgb", space, 5);
    TuneRun run;
    double worst_batch_ms = 0, total_batch_ms = 0, worst_update_ms = 0;
    int batches = 0;
    while (run.proposed.size() < 200) {
        auto t0 = std::chrono::steady_clock::now();
        auto configs = tuner->next_batch(8);
        auto t1 = std::chrono::steady_clock::now();
        const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        if (run.proposed.size() >= 16) {  // the model exists
            worst_batch_ms = std::max(worst_batch_ms, ms);
            total_batch_ms += ms;
            ++batches;
        }
        std::vector<double> costs;
        for (const auto& c : configs) costs.push_back(cost(c));
        auto t2 = std::chrono::steady_clock::now();
        tuner->update(configs, costs);  // retrains the model
        auto t3 = std::chrono::steady_clock::now();
        worst_update_ms =
            std::max(worst_update_ms, std::chrono::duration<double, std::milli>(t3 - t2).count());
        run.proposed.insert(run.proposed.end(), configs.begin(), configs.end());
        run.costs.insert(run.costs.end(), costs.begin(), costs.end());
    }
    std::cout << "xgb proposal batches of 8 on 10^6 configurations: mean "
              << total_batch_ms / batches << " ms, worst " << worst_batch_ms
              << " ms; worst update (training on up to 200 points) " << worst_update_ms << " ms\n";
    std::cout << "best cost " << best_of(run) << " (optimum 1)\n";
    // The target is < 50 ms; the bound leaves room for sanitizer builds and a loaded machine.
    EXPECT_LT(worst_batch_ms, 250.0);
    // Random's best of 200 among 10^6 is about the 5000th configuration: cost ~1.4 and up.
    EXPECT_LT(best_of(run), 1.2);
}

// Transfer: a related task (the same knobs, the bowl's center one step away) tuned first makes
// the next task's first batches better than a cold start, whose first batches are random.
TEST(XgbTuner, HistoryOfARelatedTaskHelpsTheFirstBatches) {
    te::ConfigSpace space = space_of({8, 8, 8, 8});
    // The second task's space differs (one more knob, one knob with other choices): names line
    // the features up.
    te::ConfigSpace other = space_of({8, 8, 8, 8, 3});
    other.knobs[3].choices = {1, 2, 4, 8, 16, 32};
    other.knobs[3].default_value = 4;
    double cold = 0, warm = 0;
    for (uint64_t seed = 0; seed < 6; ++seed) {
        std::vector<int> center = {int(seed % 6) + 1, int((seed * 3 + 1) % 6) + 1, 5, 2};
        auto history = std::make_shared<TuningHistory>();
        auto first = make_tuner("xgb", space, seed, {history, "first", {{"flops", 1e6}}});
        run_tuner(*first, bowl(center), 64);

        std::vector<int> shifted = {center[0] + 1, center[1] - 1, center[2], center[3], 1};
        auto second_cold = make_tuner("xgb", other, seed);
        auto second_warm = make_tuner("xgb", other, seed, {history, "second", {{"flops", 2e6}}});
        // Two batches after the default: without history both are random.
        TuneRun c = run_tuner(*second_cold, bowl(shifted), 17);
        TuneRun w = run_tuner(*second_warm, bowl(shifted), 17);
        cold += best_of(c);
        warm += best_of(w);
        EXPECT_EQ(history->tasks_except("").size(), 2u);
    }
    std::cout << "mean best of the first 17 proposals: cold " << cold / 6 << ", with history "
              << warm / 6 << "\n";
    EXPECT_LT(warm - 6, 0.5 * (cold - 6)) << "history did not halve the distance to the optimum";
}

// A long run's history (4 tasks of 1000 points) is trained on a bounded share of it.
TEST(XgbTuner, TrainingOnALongHistoryIsBounded) {
    te::ConfigSpace space = space_of({10, 10, 10, 10, 10, 10});
    auto history = std::make_shared<TuningHistory>();
    CostFn cost = bowl({1, 2, 3, 4, 5, 6});
    for (int t = 0; t < 4; ++t) {
        auto random = make_tuner("random", space, t);
        TuneRun run = run_tuner(*random, cost, 1000, 100);
        history->add("task" + std::to_string(t), {}, space, run.proposed, run.costs);
    }
    auto t0 = std::chrono::steady_clock::now();
    auto tuner = make_tuner("xgb", space, 1, {history, "new", {}});  // trains on the history
    auto batch = tuner->next_batch(8);
    std::vector<double> costs;
    for (const auto& c : batch) costs.push_back(cost(c));
    auto t1 = std::chrono::steady_clock::now();
    tuner->update(batch, costs);  // trains again with the first own points
    auto t2 = std::chrono::steady_clock::now();
    const double first_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    const double update_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    std::cout << "xgb on 4000 history points: construction and first batch " << first_ms
              << " ms, update " << update_ms << " ms\n";
    EXPECT_LT(first_ms + update_ms, 2000.0);
    // The history (random points of the same bowl) already ranks this task's configurations:
    // the first batch's model picks (after the default) are far better than random ones.
    auto random = make_tuner("random", space, 1);
    TuneRun cold = run_tuner(*random, cost, 8);
    auto mean_after_default = [](const std::vector<double>& c) {
        double sum = 0;
        for (size_t i = 1; i < c.size(); ++i) sum += c[i];
        return sum / (c.size() - 1);
    };
    std::cout << "mean cost of the first batch: random " << mean_after_default(cold.costs)
              << ", with history " << mean_after_default(costs) << "\n";
    EXPECT_LT(mean_after_default(costs), 0.3 * mean_after_default(cold.costs));
}

}  // namespace
}  // namespace anvil::tune
