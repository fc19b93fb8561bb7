// What every tuner shares (private to tune/): its space, its seeded generator, the set of
// configurations proposed (or resumed through update) so far, and the rules of the Tuner
// interface: the default configuration first, never a configuration twice, a batch is only short
// when the space has run out.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <unordered_set>
#include <vector>

#include "tune/tuner.h"

namespace anvil::tune {

// A seeded generator whose draws are the same on every platform (the standard distributions
// are implementation-defined, which would make a tuner's proposals depend on the C++ library).
class Rng {
public:
    explicit Rng(uint64_t seed) : engine_(seed) {}
    // Uniform in [0, n); n > 0.
    int64_t below(int64_t n);
    // Uniform in [0, 1).
    double unit();

private:
    std::mt19937_64 engine_;
};

struct ConfigHash {
    size_t operator()(const Config& c) const;
};

// Configurations in index order (TVM's ConfigSpace.get: the first knob varies fastest): the
// index-th configuration, and the one after `c` (false after the last).
Config config_at(const te::ConfigSpace& space, int64_t index);
bool next_in_index_order(const te::ConfigSpace& space, Config& c);

class TunerBase : public Tuner {
public:
    TunerBase(const te::ConfigSpace& space, uint64_t seed);

    bool has_next() const final;
    std::vector<Config> next_batch(int n) final;
    void update(const std::vector<Config>& configs, const std::vector<double>& costs) final;

protected:
    // Appends up to n configurations through take(). What the tuner leaves short is filled with
    // fresh random configurations, so a tuner with nothing to say yet (no measurements) may
    // return at once.
    virtual void propose(int n, std::vector<Config>& out) = 0;
    // The measurements update() was given, after they were checked and marked proposed.
    virtual void on_measured(const std::vector<Config>& configs, const std::vector<double>& costs) {
        (void)configs;
        (void)costs;
    }

    // Appends `c` to `out` and marks it proposed, unless it was proposed before.
    bool take(const Config& c, std::vector<Config>& out);
    bool was_proposed(const Config& c) const { return proposed_.contains(c); }
    int64_t proposed_count() const { return static_cast<int64_t>(proposed_.size()); }
    // A configuration drawn uniformly among those never proposed; nullopt when none is left.
    std::optional<Config> draw_fresh();
    // A uniformly random configuration, proposed or not.
    Config draw_any();

    const te::ConfigSpace& space() const { return space_; }
    Rng& rng() { return rng_; }

private:
    te::ConfigSpace space_;
    int64_t size_;  // saturates at INT64_MAX: such a space never runs out
    Rng rng_;
    std::unordered_set<Config, ConfigHash> proposed_;
};

}  // namespace anvil::tune
