#include "driver/lower_graph.h"

#include <unordered_map>

#include "driver/build.h"
#include "driver/shape_buckets.h"
#include "driver/workload_key.h"
#include "graph/expr_functor.h"
#include "ops/call_tir.h"
#include "ops/injective_schedule.h"
#include "ops/tensor_shape.h"
#include "support/error.h"
#include "tune/tuner.h"

namespace anvil::driver {

using graph::Expr;

namespace {

// The TE form of one fused function: its inputs as placeholders, each node's value as tensors.
class GroupBuilder {
public:
    explicit GroupBuilder(const graph::Function& f) : f_(f) {}

    void build() {
        // Checked before walking: the walk would otherwise enter the nested function's body.
        graph::post_order_visit(f_.body, [&](const Expr& e) {
            if (e.is<graph::Function>()) {
                user_error(e->loc)
                    << "a fused function calls another function; fuse_ops makes flat groups";
            }
        });
        for (size_t i = 0; i < f_.params.size(); ++i) {
            const auto& p = f_.params[i];
            // The type is checked first: in one call the order of the arguments is unspecified
            // (clang builds te_shape's first, which fails with an internal error on a tuple).
            const DataType dtype = tensor_dtype(p->type);
            te::Tensor t =
                te::placeholder(ops::te_shape(p->type), dtype, "p" + std::to_string(i), p->loc);
            inputs_.push_back(t);
            values_[p.get()] = {t};
        }
        graph::post_order_visit(f_.body, [&](const Expr& e) { visit(e); });
        outputs_ = values_.at(f_.body.get());
    }

    const std::vector<te::Tensor>& inputs() const { return inputs_; }
    const std::vector<te::Tensor>& outputs() const { return outputs_; }
    const std::vector<Expr>& lifted() const { return lifted_; }

    struct OpCall {
        const graph::Op* op;
        std::vector<te::Tensor> results;
    };
    const std::vector<OpCall>& calls() const { return calls_; }

private:
    static DataType tensor_dtype(const graph::Type& t) {
        auto* tt = t.as<graph::TensorType>();
        if (!tt)
            user_error() << "a fused function takes a " << graph::type_str(t) << "; only tensors";
        return tt->dtype;
    }

    void visit(const Expr& e) {
        if (values_.count(e.get())) return;
        if (auto* c = e.as<graph::Constant>()) {
            // Weights enter as kernel arguments, so identical groups share code.
            const DataType dtype = tensor_dtype(e->type);  // before te_shape, as above
            te::Tensor t = te::placeholder(ops::te_shape(e->type), dtype,
                                           "c" + std::to_string(lifted_.size()), e->loc);
            lifted_.push_back(e);
            inputs_.push_back(t);
            values_[c] = {t};
        } else if (auto* call = e.as<graph::Call>()) {
            if (!call->op.defined()) {
                user_error(e->loc)
                    << "a fused function calls another function; fuse_ops makes flat groups";
            }
            if (!call->op->compute) {
                user_error(e->loc)
                    << "op " << call->op->name << " has no tensor-expression compute";
            }
            std::vector<te::Tensor> in;
            for (const auto& a : call->args) {
                const auto& v = values_.at(a.get());
                in.insert(in.end(), v.begin(), v.end());
            }
            std::vector<te::Tensor> out = call->op->compute(in, *call->attrs, e->type);
            calls_.push_back({call->op.get(), out});
            values_[call] = out;
        } else if (auto* tuple = e.as<graph::Tuple>()) {
            std::vector<te::Tensor> all;
            for (const auto& f : tuple->fields) {
                const auto& v = values_.at(f.get());
                all.insert(all.end(), v.begin(), v.end());
            }
            values_[tuple] = all;
        } else if (auto* item = e.as<graph::TupleGetItem>()) {
            values_[item] = {values_.at(item->tuple.get()).at(item->index)};
        } else if (!e.is<graph::Var>()) {
            user_error(e->loc) << "a fused function contains a " << graph::expr_kind_name(e->kind);
        }
    }

    const graph::Function& f_;
    std::vector<te::Tensor> inputs_, outputs_;
    std::vector<Expr> lifted_;
    std::vector<OpCall> calls_;
    std::unordered_map<const graph::ExprNode*, std::vector<te::Tensor>> values_;
};

// A kernel's outputs must be distinct computed tensors: copy a passed-through input or a tensor
// returned twice.
std::vector<te::Tensor> distinct_outputs(const std::vector<te::Tensor>& outputs) {
    std::vector<te::Tensor> out;
    for (const auto& t : outputs) {
        bool repeated = false;
        for (const auto& o : out) repeated |= o.same_as(t);
        if (t.op->kind == te::OpKind::Placeholder || repeated) {
            out.push_back(te::compute(
                t.shape(),
                [&](std::span<const PrimExpr> i) {
                    return t(std::vector<PrimExpr>(i.begin(), i.end()));
                },
                t.name() + "_copy"));
        } else {
            out.push_back(t);
        }
    }
    return out;
}

bool contains(const std::vector<te::Tensor>& ts, const te::Tensor& t) {
    for (const auto& x : ts) {
        if (x.same_as(t)) return true;
    }
    return false;
}

}  // namespace

FunctionComputation function_computation(const graph::Function& f) {
    GroupBuilder group(f);
    group.build();
    return {group.inputs(), distinct_outputs(group.outputs()), group.lifted()};
}

LoweredFunction lower_primitive_function_with_program(const graph::Function& f,
                                                      const std::string& name, const Target& target,
                                                      const PipelineOptions& options,
                                                      const te::ScheduleRecord& program) {
    FunctionComputation c = function_computation(f);
    te::Schedule s = te::create_schedule(c.outputs);
    s.apply(program);
    std::vector<te::Tensor> args = c.inputs;
    args.insert(args.end(), c.outputs.begin(), c.outputs.end());
    return {lower(s, args, name, target, options), c.lifted_constants, {}, {}, s.record()};
}

LoweredFunction lower_primitive_function(const graph::Function& f, const std::string& name,
                                         const Target& target, const PipelineOptions& options,
                                         const te::KnobValues& config) {
    GroupBuilder group(f);
    group.build();
    std::vector<te::Tensor> outputs = distinct_outputs(group.outputs());
    te::Schedule s = te::create_schedule(outputs);
    // The anchor: the op with the highest fusion pattern; the last one among equals.
    const GroupBuilder::OpCall* anchor = nullptr;
    for (const auto& c : group.calls()) {
        if (!anchor || c.op->pattern >= anchor->op->pattern) anchor = &c;
    }
    bool injective_group = !anchor || anchor->op->pattern <= graph::OpPattern::Injective;
    // Elementwise and injective intermediates are computed where they are read.
    for (const auto& c : group.calls()) {
        if (c.op->pattern > graph::OpPattern::Injective) continue;
        if (!injective_group && &c == anchor) continue;
        for (const auto& t : c.results) {
            // A result nothing reads (an unused part of a split) has no stage.
            if (!contains(outputs, t) && s.has_stage(t)) s[t].compute_inline();
        }
    }
    te::ScheduleConfig schedule_config(config);
    te::ScheduleContext ctx(make_lower_context(target), &schedule_config);
    if (!anchor || !anchor->op->schedule) {
        ops::schedule_injective(s, outputs[0], outputs, ctx);
    } else if (injective_group) {
        // The anchor's own injective schedule (nn.pad's rows) for the whole group.
        anchor->op->schedule(s, outputs[0], outputs, ctx);
    } else {
        anchor->op->schedule(s, anchor->results[0], outputs, ctx);
    }
    std::vector<te::Tensor> args = group.inputs();
    args.insert(args.end(), outputs.begin(), outputs.end());
    return {lower(s, args, name, target, options), group.lifted(), schedule_config.space(),
            schedule_config.resolved(), s.record()};
}

std::string kernel_base_name(const graph::Function& f) {
    // The first four ops, operands first; an op that takes its inputs' computation into its
    // kernel (nn.attention) comes first, the head split and transposes before it left out.
    std::vector<std::string> ops;
    graph::post_order_visit(f.body, [&](const Expr& e) {
        auto* c = e.as<graph::Call>();
        if (!c || !c->op.defined()) return;
        if (c->op->fuses_injective_inputs) ops.clear();
        ops.push_back(c->op->name);
    });
    std::string name = "fused";
    for (size_t i = 0; i < ops.size() && i < 4; ++i) {
        std::string op = ops[i];
        for (auto& ch : op) {
            if (ch == '.') ch = '_';
        }
        if (op.rfind("nn_", 0) == 0) op = op.substr(3);
        name += "_" + op;
    }
    return name;
}

namespace {

class FusedCallLowerer : public graph::ExprMutator {
public:
    FusedCallLowerer(graph::IRModule& m, const Target& target, const PipelineOptions& options)
        : module_(m), target_(target), options_(options) {}

    std::vector<KernelTuning>& tuning() { return tuning_; }

protected:
    Expr mutate_(const graph::Call* op, const Expr& self) override {
        Expr base = ExprMutator::mutate_(op, self);
        auto* call = base.as<graph::Call>();
        if (!call->callee.defined()) return base;
        auto* fn = call->callee.as<graph::Function>();
        if (!fn || !fn->primitive) return base;
        std::string key = workload_key(*fn);
        BucketVariants buckets = bucket_variants(*fn, options_.shape_buckets);
        auto it = kernels_.find(key);
        if (it == kernels_.end()) {
            std::string name = unique_name(kernel_base_name(*fn));
            KernelTuning tuning{.kernel = name, .workload = key};
            const tune::TuningRecord* record = tuned_record(key, tuning);
            config_ = record && !tuning.program ? record->config : te::KnobValues{};
            Ref<tir::PrimFunc> kernel;
            try {
                if (record && tuning.program) {
                    kernel = lower_primitive_function_with_program(*fn, name, target_, options_,
                                                                   record->schedule)
                                 .kernel;
                    tuning.tunable = true;
                } else {
                    LoweredFunction lowered =
                        lower_primitive_function(*fn, name, target_, options_, config_);
                    kernel = lowered.kernel;
                    tuning.tunable = !lowered.space.knobs.empty();
                    // A record naming knobs the schedule no longer declares applies only in
                    // part.
                    if (tuning.applied && !tune::config_of_values(lowered.space, config_)) {
                        user_error() << "its knobs (" << te::knob_values_str(config_)
                                     << ") are not those of this kernel's schedule";
                    }
                }
            } catch (const UserError& e) {
                if (!tuning.applied) throw;
                // The record was made for another space or computation of this workload (an
                // older schedule or compute).
                tuning.applied = false;
                tuning.program = false;
                tuning.note = std::string("tuning record not applied: ") + e.what();
                config_.clear();
                LoweredFunction lowered = lower_primitive_function(*fn, name, target_, options_);
                kernel = lowered.kernel;
                tuning.tunable = !lowered.space.knobs.empty();
            }
            module_.kernels[name] = kernel;
            it = kernels_.emplace(key, KernelEntry{name, lower_variants(*fn, *kernel, buckets)})
                     .first;
            tuning_index_[key] = tuning_.size();
            tuning_.push_back(std::move(tuning));
        }
        ++tuning_[tuning_index_.at(key)].calls;
        const KernelEntry& entry = it->second;
        // The variants' sizes, and the dimensions they fix as this call's types name them (the
        // same names, in the same order, for every function with this key).
        ops::KernelVariants variants;
        if (!entry.variants.empty()) {
            ANVIL_CHECK(buckets.sizes.size() == entry.variants.size())
                << "the variants of " << entry.name << " differ between its calls";
            variants.dims.assign(buckets.dims.begin(), buckets.dims.end());
            variants.kernels = entry.variants;
            for (const auto& row : buckets.sizes) {
                variants.values.insert(variants.values.end(), row.begin(), row.end());
            }
        }
        // The function's constants become trailing arguments, in the order the kernel's first
        // lowering met them (the same for every function with this key).
        std::vector<Expr> args = call->args;
        graph::post_order_visit(fn->body, [&](const Expr& e) {
            if (e.is<graph::Constant>()) args.push_back(e);
        });
        // The kernel's scalar parameters are the graph's own dimension variables.
        std::vector<PrimExpr> shape_args;
        for (const auto& v : module_.kernels.at(entry.name)->scalar_params) {
            shape_args.push_back(PrimExpr(v));
        }
        return ops::make_call_tir(entry.name, std::move(args), call->type, call->loc,
                                  std::move(shape_args), std::move(variants));
    }

    // Primitive functions are lowered, never rewritten inside.
    Expr mutate_(const graph::Function* op, const Expr& self) override {
        if (op->primitive) return self;
        return ExprMutator::mutate_(op, self);
    }

private:
    // The best record of the workload, if any: a template configuration or an auto-scheduler
    // program (the faster of the two searches, as BestRecords keeps one per workload).
    const tune::TuningRecord* tuned_record(const std::string& key, KernelTuning& tuning) {
        if (!options_.tuning_records) return nullptr;
        const tune::TuningRecord* r = options_.tuning_records->find(key, target_.str());
        if (!r) return nullptr;
        tuning.applied = true;
        tuning.program = r->search == tune::SearchKind::program;
        tuning.record_cost = r->mean_cost();
        return r;
    }

    struct KernelEntry {
        std::string name;
        std::vector<std::string> variants;  // one kernel per row of the bucket sizes
    };

    std::string unique_name(const std::string& base) const {
        std::string unique = base;
        for (int i = 1; module_.kernels.count(unique); ++i) {
            unique = base + "_" + std::to_string(i);
        }
        return unique;
    }

    // The kernels of `fn` with its bucketed dimensions fixed to each row of sizes, with the
    // scalar parameters of `generic` (so every variant takes the generic kernel's arguments).
    std::vector<std::string> lower_variants(const graph::Function& fn, const tir::PrimFunc& generic,
                                            const BucketVariants& buckets) {
        std::vector<std::string> names;
        std::vector<Ref<tir::PrimFunc>> kernels;
        for (const auto& sizes : buckets.sizes) {
            std::string name = unique_name(generic.name + "_" + bucket_suffix(buckets.dims, sizes));
            Ref<graph::Function> specialized;
            try {
                specialized = specialize_dims(fn, buckets.dims, sizes);
            } catch (const UserError& e) {
                std::string fixed;
                for (size_t j = 0; j < sizes.size(); ++j) {
                    fixed +=
                        (j ? ", " : "") + buckets.dims[j]->name + " = " + std::to_string(sizes[j]);
                }
                user_error() << "--shape-buckets: kernel " << generic.name
                             << " cannot be specialized for " << fixed << ": " << e.what();
            }
            // A variant takes the generic kernel's configuration when it fits its space.
            Ref<tir::PrimFunc> k;
            try {
                k = lower_primitive_function(*specialized, name, target_, options_, config_).kernel;
            } catch (const UserError&) {
                if (config_.empty()) throw;
                k = lower_primitive_function(*specialized, name, target_, options_).kernel;
            }
            // Fixing dimensions only removes scalar parameters; one the generic kernel lacks
            // (a type rule that named a new dimension) leaves this kernel unspecialized.
            for (const auto& v : k->scalar_params) {
                bool shared = false;
                for (const auto& g : generic.scalar_params) shared = shared || g.same_as(v);
                if (!shared) return {};
            }
            kernels.push_back(tir::make_prim_func(name, k->params, k->body, generic.scalar_params));
            names.push_back(name);
        }
        for (size_t i = 0; i < names.size(); ++i) module_.kernels[names[i]] = kernels[i];
        return names;
    }

    graph::IRModule& module_;
    const Target& target_;
    const PipelineOptions& options_;
    std::unordered_map<std::string, KernelEntry> kernels_;  // by function key
    std::vector<KernelTuning> tuning_;
    std::unordered_map<std::string, size_t> tuning_index_;  // by function key
    te::KnobValues config_;  // the configuration of the kernel being lowered (and its variants)
};

}  // namespace

graph::IRModule lower_fused_functions(const graph::IRModule& m, const Target& target,
                                      const PipelineOptions& options,
                                      std::vector<KernelTuning>* tuning) {
    graph::IRModule out = m;
    FusedCallLowerer lowerer(out, target, options);
    for (auto& [name, fn] : out.functions) {
        Expr lowered = lowerer.mutate(Expr(fn));
        fn = lowered.cast<graph::Function>();
    }
    if (tuning) *tuning = std::move(lowerer.tuning());
    return out;
}

}  // namespace anvil::driver
