#include "tune/sketch/evolutionary_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "support/error.h"
#include "support/large_stack.h"
#include "te/schedule_to_loops.h"
#include "tune/program_features.h"

namespace anvil::tune {

namespace {

// The measured programs kept as seeds of every population (the best first).
constexpr size_t kKeptMeasured = 64;
constexpr size_t kSeedsPerPopulation = 8;

}  // namespace

Ref<tir::PrimFunc> replay_program(const std::vector<te::Tensor>& inputs,
                                  const std::vector<te::Tensor>& outputs,
                                  const te::ScheduleRecord& record) {
    te::Schedule sch = te::create_schedule(outputs);
    sch.apply(record);
    std::vector<te::Tensor> args = inputs;
    args.insert(args.end(), outputs.begin(), outputs.end());
    return te::schedule_to_loops(sch, args, "program");
}

EvolutionarySearch::EvolutionarySearch(SearchKernel kernel, std::shared_ptr<ProgramCostModel> model,
                                       uint64_t seed, SearchOptions options)
    : kernel_(std::move(kernel)), model_(std::move(model)), rng_(seed), options_(options) {
    te::Schedule fresh = te::create_schedule(kernel_.outputs);
    sketches_ = generate_sketches(fresh, kernel_.target, options_.max_sketches);
}

std::optional<Program> EvolutionarySearch::make_program(int s, Decisions decisions) {
    try {
        te::Schedule sch = te::create_schedule(kernel_.outputs);
        realize(sketches_.at(s), decisions, sch);
        std::vector<te::Tensor> args = kernel_.inputs;
        args.insert(args.end(), kernel_.outputs.begin(), kernel_.outputs.end());
        Ref<tir::PrimFunc> loops = te::schedule_to_loops(sch, args, "candidate");
        Program p;
        p.sketch = s;
        p.decisions = std::move(decisions);
        p.record = sch.record();
        p.key = te::print_record(p.record);
        p.features = program_features(*loops);
        return p;
    } catch (const std::exception&) {
        // A rule that made an invalid schedule: counted (tests require none), never fatal to
        // the tuning run.
        ++invalid_;
        return std::nullopt;
    }
}

std::optional<Program> EvolutionarySearch::random_program() {
    if (sketches_.empty()) return std::nullopt;
    const int s =
        std::uniform_int_distribution<int>(0, static_cast<int>(sketches_.size()) - 1)(rng_);
    return make_program(s, sample_decisions(sketches_[s], rng_));
}

Decisions EvolutionarySearch::mutate(const Program& p) {
    const Sketch& sketch = sketches_.at(p.sketch);
    Decisions d = p.decisions;
    std::vector<int> mutable_slots;
    for (size_t k = 0; k < sketch.space.slots.size(); ++k) {
        const auto& slot = sketch.space.slots[k];
        const bool open = slot.kind == DecisionSlot::Kind::Tile ? slot.extent > 1 && slot.levels > 1
                                                                : slot.options > 1;
        if (open) mutable_slots.push_back(static_cast<int>(k));
    }
    if (mutable_slots.empty()) return d;
    const int k =
        mutable_slots[std::uniform_int_distribution<size_t>(0, mutable_slots.size() - 1)(rng_)];
    const auto& slot = sketch.space.slots[k];
    if (slot.kind == DecisionSlot::Kind::Choice) {
        int64_t v = std::uniform_int_distribution<int64_t>(0, slot.options - 2)(rng_);
        if (v >= d[k][0]) ++v;  // any other option
        d[k][0] = v;
        return d;
    }
    // A tile is sampled afresh one time in four (a longer jump than moving one factor, and the
    // only way to change how far an awkward extent is padded); otherwise one prime factor of a
    // level moves to another level.
    auto& f = d[k];
    if (std::bernoulli_distribution(0.25)(rng_)) {
        f = sample_tile(slot.extent, slot.levels, slot.max_innermost, rng_, slot.vector_width);
        return d;
    }
    for (int attempt = 0; attempt < 8; ++attempt) {
        std::vector<int> from_levels;
        for (int lv = 0; lv < slot.levels; ++lv) {
            if (f[lv] > 1) from_levels.push_back(lv);
        }
        const int from =
            from_levels[std::uniform_int_distribution<size_t>(0, from_levels.size() - 1)(rng_)];
        int to = std::uniform_int_distribution<int>(0, slot.levels - 2)(rng_);
        if (to >= from) ++to;
        // A random one of its prime factors (trial division up to the square root).
        std::vector<int64_t> primes;
        for (int64_t rest = f[from], p = 2; rest > 1;) {
            if (p * p > rest) {
                primes.push_back(rest);
                break;
            }
            if (rest % p == 0) {
                primes.push_back(p);
                rest /= p;
            } else {
                ++p;
            }
        }
        const int64_t q = primes[std::uniform_int_distribution<size_t>(0, primes.size() - 1)(rng_)];
        if (to == slot.levels - 1 && f[to] * q > slot.max_innermost) continue;
        f[from] /= q;
        f[to] *= q;
        break;
    }
    return d;
}

Decisions EvolutionarySearch::crossover(const Program& a, const Program& b) {
    const Sketch& sketch = sketches_.at(a.sketch);
    Decisions d = a.decisions;
    std::vector<int> from_b(sketch.plans.size(), 0);
    for (auto& v : from_b) v = std::bernoulli_distribution(0.5)(rng_);
    for (size_t k = 0; k < sketch.space.slots.size(); ++k) {
        const int plan = sketch.space.slots[k].plan;
        if (plan >= 0 && from_b[plan]) d[k] = b.decisions[k];
    }
    return d;
}

std::vector<float> EvolutionarySearch::scores(const std::vector<Program>& programs) {
    std::vector<std::vector<float>> rows;
    rows.reserve(programs.size());
    for (const auto& p : programs) rows.push_back(p.features);
    std::optional<std::vector<float>> predicted = model_ ? model_->predict(rows) : std::nullopt;
    if (predicted) {
        // The sorts below need a strict order: a score that is not a number ranks last.
        for (auto& x : *predicted) {
            if (!std::isfinite(x)) x = std::numeric_limits<float>::lowest();
        }
        return *predicted;
    }
    // No model yet: random order.
    std::vector<float> r(programs.size());
    std::uniform_real_distribution<float> u(0, 1);
    for (auto& x : r) x = u(rng_);
    return r;
}

std::vector<Program> EvolutionarySearch::next_batch(int n) {
    // Lowering recurses over nested expressions: on a large stack, as compiling does.
    return call_with_large_stack([&] { return propose(n); });
}

std::vector<Program> EvolutionarySearch::propose(int n) {
    if (sketches_.empty() || n <= 0) return {};
    std::unordered_set<std::string> seen;
    std::vector<Program> population;
    auto add = [&](std::vector<Program>& to, Program p) {
        if (seen.insert(p.key).second) to.push_back(std::move(p));
    };
    for (size_t k = 0; k < measured_.size() && k < kSeedsPerPopulation; ++k) {
        add(population, measured_[k].second);
    }
    std::vector<Program> randoms;
    for (int attempt = 0; static_cast<int>(population.size()) < options_.population &&
                          attempt < 4 * options_.population;
         ++attempt) {
        std::optional<Program> p = random_program();
        if (!p) continue;
        if (!proposed_.count(p->key) && !seen.count(p->key)) randoms.push_back(*p);
        add(population, std::move(*p));
    }
    std::vector<Program> pool = population;
    for (int g = 0; g < options_.generations && !population.empty(); ++g) {
        std::vector<float> sc = scores(population);
        std::vector<size_t> order(population.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sc[a] > sc[b]; });
        // Parents: tournaments of two, the better-scored wins.
        auto parent = [&]() -> const Program& {
            std::uniform_int_distribution<size_t> pick(0, population.size() - 1);
            size_t a = pick(rng_), b = pick(rng_);
            return population[sc[a] >= sc[b] ? a : b];
        };
        std::vector<Program> next;
        for (size_t k = 0; k < order.size() && k < population.size() / 4; ++k) {
            next.push_back(population[order[k]]);
        }
        for (int attempt = 0; static_cast<int>(next.size()) < options_.population &&
                              attempt < 4 * options_.population;
             ++attempt) {
            const Program& a = parent();
            Decisions child;
            const Program& b = parent();
            if (b.sketch == a.sketch &&
                !std::bernoulli_distribution(options_.mutation_probability)(rng_)) {
                child = crossover(a, b);
            } else {
                child = mutate(a);
            }
            std::optional<Program> p = make_program(a.sketch, std::move(child));
            if (!p || seen.count(p->key)) continue;
            pool.push_back(*p);
            add(next, std::move(*p));
        }
        population = std::move(next);
    }
    // The batch: the best-scored programs never proposed, and a few random ones.
    std::vector<Program> fresh;
    for (auto& p : pool) {
        if (!proposed_.count(p.key)) fresh.push_back(std::move(p));
    }
    std::vector<float> sc = scores(fresh);
    std::vector<size_t> order(fresh.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sc[a] > sc[b]; });
    const double expected_random = options_.eps_greedy * n;
    int n_random = static_cast<int>(expected_random);
    if (std::bernoulli_distribution(expected_random - n_random)(rng_)) ++n_random;
    std::vector<Program> batch;
    std::unordered_set<std::string> taken;
    for (size_t k = 0; k < order.size() && static_cast<int>(batch.size()) < n - n_random; ++k) {
        if (taken.insert(fresh[order[k]].key).second) batch.push_back(fresh[order[k]]);
    }
    std::shuffle(randoms.begin(), randoms.end(), rng_);
    for (auto& p : randoms) {
        if (static_cast<int>(batch.size()) >= n) break;
        if (taken.insert(p.key).second) batch.push_back(std::move(p));
    }
    // Too few random ones left: fill with the next best-scored.
    for (size_t k = 0; k < order.size() && static_cast<int>(batch.size()) < n; ++k) {
        if (taken.insert(fresh[order[k]].key).second) batch.push_back(fresh[order[k]]);
    }
    for (const auto& p : batch) proposed_.insert(p.key);
    return batch;
}

bool EvolutionarySearch::resume(const te::ScheduleRecord& record, double cost) {
    std::vector<float> features;
    try {
        features = call_with_large_stack([&] {
            return program_features(*replay_program(kernel_.inputs, kernel_.outputs, record));
        });
    } catch (const UserError&) {
        return false;  // a record of another computation of this workload (an older Anvil)
    }
    proposed_.insert(te::print_record(record));
    if (model_) model_->add(kernel_.task, {features}, {cost});
    return true;
}

void EvolutionarySearch::update(const std::vector<Program>& programs,
                                const std::vector<double>& costs) {
    ANVIL_CHECK(programs.size() == costs.size())
        << programs.size() << " programs, " << costs.size() << " costs";
    std::vector<std::vector<float>> rows;
    for (size_t i = 0; i < programs.size(); ++i) {
        proposed_.insert(programs[i].key);
        rows.push_back(programs[i].features);
        if (std::isfinite(costs[i]) && costs[i] > 0) measured_.emplace_back(costs[i], programs[i]);
    }
    if (model_) model_->add(kernel_.task, rows, costs);
    std::stable_sort(measured_.begin(), measured_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (measured_.size() > kKeptMeasured) measured_.resize(kKeptMeasured);
}

}  // namespace anvil::tune
