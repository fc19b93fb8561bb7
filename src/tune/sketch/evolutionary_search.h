// The template-free search of one kernel (Ansor's SketchPolicy): sketches of its computation,
// random programs filling their decisions, and evolution of the population under the learned
// cost model.
//
//   EvolutionarySearch search(kernel, model, seed);
//   while (budget) {
//       std::vector<Program> batch = search.next_batch(8);  // never a program twice
//       ... build and measure each program.record ...
//       search.update(batch, costs);                       // +inf for a failure
//   }
//
// Each batch: a population of random programs and the best measured ones evolves for a few
// generations — mutations of one decision (a tile factor moved between levels or a tile sampled
// afresh, the unroll depth, the parallel loops, a compute location, the vector width) and
// crossovers of two programs of one sketch (each stage's decisions from either parent) —
// selected by predicted score; the batch is the best-scored programs never measured, plus a few
// random ones (ε-greedy), so a wrong model cannot keep the search from ever seeing the rest of
// the space.
//
// Not thread-safe: one search is used by one thread at a time (a cost model may be shared).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "te/schedule_record.h"
#include "te/tensor.h"
#include "tir/stmt.h"
#include "tune/program_cost_model.h"
#include "tune/sketch/sketch.h"

namespace anvil::tune {

// The loops `record` makes on a fresh schedule of the computation (te::schedule_to_loops; before
// the pipeline's passes, as the cost model's features see them). UserError when the record does
// not apply to it.
Ref<tir::PrimFunc> replay_program(const std::vector<te::Tensor>& inputs,
                                  const std::vector<te::Tensor>& outputs,
                                  const te::ScheduleRecord& record);

// The computation of one kernel: what a fresh schedule is made from and lowered with.
struct SearchKernel {
    std::string task;                // its name in the cost model (the workload key)
    std::vector<te::Tensor> inputs;  // the kernel's input arguments, in order
    std::vector<te::Tensor> outputs;
    SketchTarget target;
};

struct Program {
    int sketch = -1;
    Decisions decisions;
    te::ScheduleRecord record;    // what realize() applied
    std::string key;              // the record's text: a program's identity
    std::vector<float> features;  // program_features of its loops
};

struct SearchOptions {
    int population = 48;
    int generations = 3;
    double mutation_probability = 0.85;  // else crossover
    double eps_greedy = 0.05;
    int max_sketches = 16;
};

class EvolutionarySearch {
public:
    EvolutionarySearch(SearchKernel kernel, std::shared_ptr<ProgramCostModel> model, uint64_t seed,
                       SearchOptions options = {});

    // Up to n programs never returned before (fewer when no more valid ones are found).
    std::vector<Program> next_batch(int n);
    // Costs in seconds (+inf: failed) of programs next_batch returned.
    void update(const std::vector<Program>& programs, const std::vector<double>& costs);

    // A program an earlier run measured (a resumed run, the tuning cache): never proposed again,
    // and the cost model learns from it. (It does not seed populations: its decisions are not
    // recorded, only its primitives.) False when the record does not apply to this computation
    // (made by an older Anvil): the caller must not count it.
    bool resume(const te::ScheduleRecord& record, double cost);

    const std::vector<Sketch>& sketches() const { return sketches_; }
    // Programs that realize() or lowering rejected (a rule bug if not zero: tests check it).
    int invalid() const { return invalid_; }
    // Lowers `decisions` of sketch `s` into a program (nullopt when it is invalid).
    std::optional<Program> make_program(int s, Decisions decisions);

private:
    std::vector<Program> propose(int n);
    std::optional<Program> random_program();
    Decisions mutate(const Program& p);
    Decisions crossover(const Program& a, const Program& b);
    std::vector<float> scores(const std::vector<Program>& programs);

    SearchKernel kernel_;
    std::shared_ptr<ProgramCostModel> model_;
    std::mt19937_64 rng_;
    SearchOptions options_;
    std::vector<Sketch> sketches_;
    std::unordered_set<std::string> proposed_;
    // The measured programs with their costs, best first (the population's seeds).
    std::vector<std::pair<double, Program>> measured_;
    int invalid_ = 0;
};

}  // namespace anvil::tune
