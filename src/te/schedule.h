// Schedules: how a tensor-expression computation becomes loops.
//
// A Schedule holds one Stage per operation, in topological order (producers first). A stage's
// loops start as its root axes (data-parallel axes, then reduction axes) and are transformed by
// primitives: split and fuse make new axes related to old ones (relations), reorder permutes the
// leaf axes (the loops, outermost first), and annotations mark loops parallel, vectorized,
// unrolled or bound to GPU threads. compute_at / compute_inline / compute_root say where a
// producer is computed; cache_read / cache_write add staging copies; rfactor splits a reduction
// into a stage that reduces partially along one reduction loop, kept as a data axis, and the
// original stage that reduces those partial results (schedule_rfactor.cpp).
//
// Every primitive is recorded (schedule_record.h) and validated when applied: an invalid use
// raises a UserError naming the primitive, the stage and the axis.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "te/schedule_record.h"
#include "te/tensor.h"

namespace anvil::te {

enum class AttachKind : uint8_t { Root, Inline, Scope };
enum class LoopAnnotation : uint8_t { Parallel, Vectorize, Unroll, Bind };

// parent = outer * factor + inner (split), fused = outer * extent(inner) + inner (fuse).
struct Relation {
    enum class Kind : uint8_t { Split, Fuse } kind;
    Ref<IterVar> parent;  // split: the axis split; fuse: the fused result
    Ref<IterVar> outer;
    Ref<IterVar> inner;
    int64_t factor = 0;  // split: inner extent (when !nparts) or outer extent (when nparts)
    bool nparts = false;
};

struct Stage {
    std::string name;
    Ref<Operation> op;                    // current op (cache primitives replace it)
    std::vector<Ref<IterVar>> root_axes;  // op's axes then its reduce axes
    std::vector<Ref<IterVar>> leaf_axes;  // the loops, outermost first
    std::vector<Relation> relations;      // in application order
    std::vector<std::pair<Ref<IterVar>, std::string>> axis_names;  // unique within the stage
    std::unordered_map<const IterVar*, LoopAnnotation> annotations;
    std::unordered_map<const IterVar*, std::string> thread_tags;
    AttachKind attach = AttachKind::Root;
    std::string attach_stage;      // for Scope
    Ref<IterVar> attach_axis;      // for Scope: a leaf axis of attach_stage
    std::string scope = "global";  // storage scope of the stage's buffer
    bool is_output = false;

    bool is_placeholder() const { return op->kind == OpKind::Placeholder; }
    const std::string& axis_name(const Ref<IterVar>& axis) const;
    Ref<IterVar> find_axis(const std::string& name) const;  // null when absent
};

class Schedule;

// `s[C]`: the stage of tensor C with the primitives as methods (TVM's spelling).
class StageRef {
public:
    StageRef(Schedule* s, std::string name) : sch_(s), name_(std::move(name)) {}
    std::pair<Ref<IterVar>, Ref<IterVar>> split(const Ref<IterVar>& axis, int64_t factor);
    std::pair<Ref<IterVar>, Ref<IterVar>> split_nparts(const Ref<IterVar>& axis, int64_t nparts);
    // Returns {x.outer, y.outer, x.inner, y.inner}.
    std::vector<Ref<IterVar>> tile(const Ref<IterVar>& x, const Ref<IterVar>& y, int64_t x_factor,
                                   int64_t y_factor);
    void reorder(const std::vector<Ref<IterVar>>& order);
    Ref<IterVar> fuse(const std::vector<Ref<IterVar>>& axes);
    void vectorize(const Ref<IterVar>& axis);
    void parallel(const Ref<IterVar>& axis);
    void unroll(const Ref<IterVar>& axis);
    void bind(const Ref<IterVar>& axis, const std::string& thread_tag);
    void compute_at(StageRef parent, const Ref<IterVar>& axis);
    void compute_inline();
    void compute_root();

    const Stage& stage() const;
    // The root axes of the stage's current op (data-parallel, then reduction).
    std::vector<Ref<IterVar>> op_axis() const;
    std::vector<Ref<IterVar>> op_reduce_axis() const;
    std::vector<Ref<IterVar>> leaf_axes() const { return stage().leaf_axes; }
    const std::string& name() const { return name_; }

private:
    friend class Schedule;  // Schedule::rfactor records its axis by this stage's name for it
    std::string axis_name(const Ref<IterVar>& axis, const char* primitive) const;
    Schedule* sch_;
    std::string name_;
};

class Schedule {
public:
    // Stages for every operation the outputs depend on.
    explicit Schedule(const std::vector<Tensor>& outputs);

    StageRef operator[](const Tensor& t);
    // Whether `t`'s op has a stage (an output of a multi-output op nothing reads has none).
    bool has_stage(const Tensor& t) const { return stage_of_op_.count(t.op.get()) > 0; }
    StageRef operator[](const std::string& stage_name);

    // Returns the cache tensor. Readers' bodies are rewritten to read the cache.
    Tensor cache_read(const Tensor& t, const std::string& scope,
                      const std::vector<Tensor>& readers);
    // Returns the cache tensor, which now computes t's body; t copies from it.
    Tensor cache_write(const Tensor& t, const std::string& scope);
    // TVM's rfactor. `axis` is a leaf reduction loop of t's stage made from its reduction axes by
    // splits only. A new stage (t's name + ".rf") computes the reduction over t's other
    // reduction loops with `axis` as a data axis, inserted at `factor_axis` (0..ndim, or
    // negative from the end as in TVM); t then reduces that stage over `axis`. Returns the new
    // tensor. Apply it before annotating t, attaching it, or splitting its data axes.
    Tensor rfactor(const Tensor& t, const Ref<IterVar>& axis, int factor_axis = 0);

    // Validates and applies one primitive and appends it to the record.
    void apply(const Primitive& p);
    // Replays a record on this schedule.
    void apply(const ScheduleRecord& record);
    const ScheduleRecord& record() const { return record_; }

    const std::vector<Stage>& stages() const { return stages_; }
    const Stage& stage(const std::string& name) const;
    Stage& stage(const std::string& name);
    // The stage computing `op` (also found by an op that a cache primitive replaced).
    const Stage* find_stage(const Operation* op) const;
    const std::vector<Tensor>& outputs() const { return outputs_; }
    // The tensor of a stage (its current op).
    Tensor tensor(const std::string& stage_name) const;

private:
    void apply_split(Stage& st, const Primitive& p);
    void apply_tile(Stage& st, const Primitive& p);
    void apply_reorder(Stage& st, const Primitive& p);
    void apply_fuse(Stage& st, const Primitive& p);
    void apply_annotation(Stage& st, const Primitive& p);
    void apply_compute_at(Stage& st, const Primitive& p);
    void apply_cache_read(const Primitive& p);
    void apply_cache_write(Stage& st, const Primitive& p);
    void apply_rfactor(Stage& st, const Primitive& p);  // schedule_rfactor.cpp
    Ref<IterVar> require_leaf_axis(const Stage& st, const Primitive& p, const std::string& axis);
    void add_stage_for(const Ref<Operation>& op, size_t position);
    std::string unique_stage_name(const std::string& base) const;

    std::vector<Stage> stages_;
    std::unordered_map<const Operation*, std::string> stage_of_op_;
    std::vector<Tensor> outputs_;
    ScheduleRecord record_;
    // Ops replaced by cache primitives, kept alive so stage_of_op_ keys stay unique.
    std::vector<Ref<Operation>> retired_;
};

Schedule create_schedule(const std::vector<Tensor>& outputs);

}  // namespace anvil::te
