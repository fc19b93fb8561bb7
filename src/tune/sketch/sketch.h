// Sketches: the structure of a schedule, generated from the tensor-expression computation alone
// (Ansor's sketch generation). A sketch says, for every stage, how it is scheduled — inlined,
// tiled in several levels (and whether its elementwise consumer is computed in its tiles, or a
// local cache stage accumulates for it), reduced through rfactor, or looped over simply — and
// leaves the numbers open: tile sizes, where producers are computed, how many loops run in
// parallel, how far inner loops are unrolled, the vector width. Those are the sketch's decision
// slots (DecisionSpace); filling them (sample_decisions, then mutations in the search) gives a
// concrete program, and realize() turns the sketch and its decisions into the schedule
// primitives that tuning records store.
//
// The rules that make sketches each live in a file of their own (rule_*.cpp); generate_sketches
// applies them to every stage, consumers before producers, and makes one sketch per combination
// of the alternatives they offer.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "te/schedule.h"
#include "tune/sketch/stage_analysis.h"

namespace anvil::tune {

// What the rules know of the target.
struct SketchTarget {
    int vector_lanes = 16;  // float32 lanes of a native vector register
};

enum class PlanKind : uint8_t {
    Skip,           // a placeholder: no loops
    Inline,         // computed where it is read
    Simple,         // its own loops: data axes (innermost split into vectors), reductions inside
    Tiled,          // multi-level tiling: spatial and reduce levels "SSRSRS"
    FusedConsumer,  // an elementwise consumer whose tiles compute a Tiled producer's tiles
    Rfactor,        // a long reduction split, its inner part reduced as a data axis (vectors)
};
const char* plan_kind_name(PlanKind k);

// One decision of a sketch: a tile (factors for `levels` levels whose product is `extent`, or a
// little more for an awkward extent, the innermost at most `max_innermost`) or a choice among
// `options` alternatives.
struct DecisionSlot {
    enum class Kind : uint8_t { Tile, Choice } kind = Kind::Choice;
    int64_t extent = 1;  // Tile
    int levels = 1;      // Tile
    int64_t max_innermost = 64;
    // Tile: the innermost level is a vector; sampling favours multiples of this width.
    int64_t vector_width = 0;
    int options = 1;   // Choice
    int plan = -1;     // the plan that owns it (crossover takes a plan's slots together)
    std::string what;  // for messages and tests: "tile C i", "parallel C", ...
};

struct StagePlan {
    std::string stage;  // the stage's name in a fresh schedule of the computation
    PlanKind kind = PlanKind::Skip;
    bool cache_write = false;  // Tiled: accumulate in a "local" cache stage fused into `stage`
    int consumer = -1;         // Tiled: the FusedConsumer plan whose tiles compute this one
    int producer = -1;         // FusedConsumer: the Tiled plan computed in its tiles
    // Decision slots, indices into DecisionSpace::slots; -1 where the plan has none.
    std::vector<int> tile_slots;          // Tiled: one per data axis, then one per reduce axis
    int fusion_level_slot = -1;           // Tiled with a consumer: level 0 or 1
    int parallel_slot = -1;               // loops fused into the parallel loop (0: none)
    int unroll_slot = -1;                 // index into kUnrollSteps
    int vector_slot = -1;                 // Simple: index into vector_factors; Rfactor: split
    int location_slot = -1;               // Simple, Rfactor: root or a loop of the reader
    std::vector<int64_t> vector_factors;  // Simple/Rfactor: the choices of vector_slot
};

struct DecisionSpace {
    std::vector<DecisionSlot> slots;
};

struct Sketch {
    std::vector<StagePlan> plans;  // one per stage of a fresh schedule, in its order
    DecisionSpace space;
    // One line per non-trivial plan: "C: tiled, cache_write, fused into D".
    std::string describe() const;
};

// Decisions of one program: per slot, the tile's factors (outer to inner) or {choice}.
using Decisions = std::vector<std::vector<int64_t>>;

// Auto-unroll steps: inner loops are unrolled while their iterations multiply to at most this.
// (Ansor's CPU steps go to 512; here a 512-fold body made LLVM's loop vectorizer analysis run
// for many minutes on one ViT candidate. Builds are killed after the build timeout now
// (tune/build_in_child.h), but each such candidate would still cost the whole timeout.)
inline constexpr int64_t kUnrollSteps[] = {0, 16, 64};
// The most loads an unrolled body may make (the step times the stage's loads per element, those
// of stages inlined into it included): stages of many loads are unrolled less, or not at all.
// A tile padded past its extent (awkward_extent) has its guarded tail peeled off as a second
// copy of the loop, so such a body compiles to at most twice this.
inline constexpr int64_t kMaxUnrolledLoads = 512;

// Every sketch of the computation whose outputs a fresh schedule `s` holds (at least one when
// it has a computed stage; at most `max_sketches`).
std::vector<Sketch> generate_sketches(const te::Schedule& s, const SketchTarget& target,
                                      size_t max_sketches = 16);

// Random decisions for a sketch.
Decisions sample_decisions(const Sketch& sketch, std::mt19937_64& rng);

// A random tile of `extent` in `levels` levels (outer to inner factors) whose innermost is at
// most `max_innermost`. The factors multiply to `extent`, or, for an awkward extent (below),
// half of the time to more (at most an eighth more, or half to make whole vectors): the
// loops overshoot and the tail is guarded. With a
// `vector_width` dividing that product, the innermost is most often (4 in 5) a multiple of it: a
// random tile of 1024 rarely is, and a partial vector wastes lanes.
std::vector<int64_t> sample_tile(int64_t extent, int levels, int64_t max_innermost,
                                 std::mt19937_64& rng, int64_t vector_width = 0);

// Whether perfect tiles of `extent` leave the inner levels poor: a vector axis that is no whole
// number of vectors, or an extent over 32 without a divisor from 4 to 32 (197 = ViT's tokens: a
// register tile of rows would be 1 or 197).
bool awkward_extent(int64_t extent, int64_t vector_width);

// Applies the sketch with its decisions to a fresh schedule of the same computation; the
// schedule's record() is then the program's primitive list. UserError when a primitive is
// invalid (a bug in a rule, or decisions of another sketch).
void realize(const Sketch& sketch, const Decisions& decisions, te::Schedule& s);

// ---- the rules (one file each) ------------------------------------------------------------

// A partial sketch while the rules run: the plans decided so far (stages after `next`).
struct SketchState {
    Sketch sketch;
    int next = 0;  // the stage the rules look at now; stages are visited outputs first
};

struct RuleContext {
    const std::vector<StageInfo>& info;
    const SketchTarget& target;
};

// Each returns the states the rule makes of `state` for stage `i`, or nothing when it does not
// apply (the next rule is tried).
std::vector<SketchState> rule_skip_placeholder(const SketchState& state, int i,
                                               const RuleContext& ctx);
std::vector<SketchState> rule_inline(const SketchState& state, int i, const RuleContext& ctx);
std::vector<SketchState> rule_multi_level_tiling(const SketchState& state, int i,
                                                 const RuleContext& ctx);
std::vector<SketchState> rule_rfactor(const SketchState& state, int i, const RuleContext& ctx);
std::vector<SketchState> rule_simple(const SketchState& state, int i, const RuleContext& ctx);

// Gives every plan of a finished sketch its decision slots (the rules only choose the plans'
// kinds, so a plan a later rule changes — a Simple consumer becoming a FusedConsumer — leaves
// no unused slots behind).
void assign_slots(Sketch& sketch, const RuleContext& ctx);

// The most loops of a reader a producer's location slot can name (choice k: its k-th loop).
inline constexpr int kMaxLocations = 8;

}  // namespace anvil::tune
