// Tunable schedules: the knobs a schedule rule declares and the configuration it runs with.
//
// A schedule rule asks its ScheduleConfig for each choice it makes instead of fixing it:
//
//   int64_t rows = ctx.knob("tile_ow", {1, 2, 4, 7, 8}, /*default=*/7);
//
// define_knob records the knob (name, choices, default) in the config's space and returns the
// value this configuration assigns to it: the default unless `values` names it. The default is
// always the analytical choice the rule made before it was tunable, so an empty configuration
// reproduces the untuned kernel exactly and tuning starts from it. Running a rule once with the
// empty configuration is how a task's search space is found (AutoTVM's define mode): the space
// is the knobs that run declared.
//
// Every kind of choice is an integer knob: a split is its inner factor (define_split), a loop
// order or an annotation is the index of one of a list of alternatives (define_reorder /
// define_annotate in AutoTVM), a flag is 0/1. What a value means is the rule's business; the
// tuners only see names and choices.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tir/passes/passes.h"

namespace anvil::te {

struct Knob {
    std::string name;
    std::vector<int64_t> choices;  // distinct, in the rule's order
    int64_t default_value = 0;     // one of choices
    bool operator==(const Knob&) const = default;
};

// A search space: the knobs of one task, in the order the rule declared them.
struct ConfigSpace {
    std::vector<Knob> knobs;

    // The number of configurations (the product of the choice counts; saturates at INT64_MAX).
    int64_t size() const;
    const Knob* find(const std::string& name) const;  // null when absent
    bool operator==(const ConfigSpace&) const = default;
};

// Knob name -> value. Knobs it does not name take their defaults.
using KnobValues = std::map<std::string, int64_t>;

// The configuration a schedule rule runs with, and the space it declares while running.
class ScheduleConfig {
public:
    ScheduleConfig() = default;
    explicit ScheduleConfig(KnobValues values) : values_(std::move(values)) {}

    // Declares knob `name` and returns its value in this configuration. InternalError when
    // `default_value` is not among `choices` or the name was declared with other choices (a rule
    // bug); UserError when the configuration assigns a value outside `choices` (a record made
    // for another space: the caller falls back to the defaults).
    int64_t define_knob(const std::string& name, std::vector<int64_t> choices,
                        int64_t default_value);
    // A split of an axis of `extent` into outer x inner: the inner factor, among the divisors of
    // `extent` up to `max_factor` (plus `default_factor`, which need not divide it).
    int64_t define_split(const std::string& name, int64_t extent, int64_t max_factor,
                         int64_t default_factor);
    // An on/off choice: 0 or 1.
    bool define_flag(const std::string& name, bool default_value);

    const ConfigSpace& space() const { return space_; }
    const KnobValues& values() const { return values_; }
    // The values of every declared knob, defaults included (what a record stores).
    KnobValues resolved() const;

private:
    KnobValues values_;
    ConfigSpace space_;
};

// What a schedule rule is given besides the schedule: the target's facts and the knob
// configuration. A context without a configuration runs every knob at its default (callers that
// do not tune, tests).
struct ScheduleContext {
    explicit ScheduleContext(tir::LowerContext t, ScheduleConfig* c = nullptr)
        : target(std::move(t)), config(c) {}
    tir::LowerContext target;
    ScheduleConfig* config = nullptr;

    ScheduleConfig& cfg() const { return config ? *config : defaults_; }
    // Shorthands for the configuration's declarations.
    int64_t knob(const std::string& name, std::vector<int64_t> choices,
                 int64_t default_value) const {
        return cfg().define_knob(name, std::move(choices), default_value);
    }
    int64_t split(const std::string& name, int64_t extent, int64_t max_factor,
                  int64_t default_factor) const {
        return cfg().define_split(name, extent, max_factor, default_factor);
    }
    bool flag(const std::string& name, bool default_value) const {
        return cfg().define_flag(name, default_value);
    }

private:
    mutable ScheduleConfig defaults_;
};

// "name=value,name=value" (sorted by name), for messages and the CLI; and back (UserError).
std::string knob_values_str(const KnobValues& values);
KnobValues parse_knob_values(const std::string& text);

}  // namespace anvil::te
