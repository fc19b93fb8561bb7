// Every graph pass, with what it requires of its input and ensures of its output.
// One pass per file, named like the function; driver/pipeline.cpp lists them in order.
//
// Signature: IRModule pass(const IRModule&, const PassContext&). Passes rewrite every
// non-primitive function of the module (primitive functions are fused groups, already final).
// The graph is eagerly typed, so a pass rebuilds nodes with make_* / ExprMutator and the types
// follow; a rewrite never edits a node in place.
//
// The passes are a library above ops/ and codegen/ (the graph IR itself is below ops/): they
// read and make op attributes through the ops' typed structs (graph_rewrite.h's attrs_of), find
// the ops they create in the op table, and know the target they compile for.
//
// Passes read ctx.opt_level only where it changes what they must produce (fuse_ops); which
// passes run at which level is the pipeline's decision (driver/pipeline.cpp).
//
// Recommended order (what driver/pipeline.cpp lists):
//   infer_types, inline_composites, fake_quantization_to_integer, fold_qnn_quantize,
//   simplify_inference, simplify_expr, fold_constants, fold_scale_axis, fuse_attention,
//   fuse_layer_norm, to_mixed_precision, merge_composite, annotate_target,
//   merge_compiler_regions, partition_graph, inline_composites, canonicalize_qnn (then
//   simplify_expr and fold_constants when it rewrote something), alter_op_layout,
//   prepack_weights, fold_constants, eliminate_common_subexpr, dead_code_elimination, fuse_ops
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codegen/external/external_compiler.h"
#include "codegen/target.h"
#include "graph/module.h"
#include "runtime/ndarray.h"

namespace anvil::graph {

struct PassContext {
    // 0: no optional rewrite; fuse_ops still wraps every op in its own primitive function.
    int opt_level = 3;
    // What the module is compiled for (set by the driver and by Python from the current target;
    // the host CPU when nothing sets it), for target-dependent rewrites (layouts, external
    // codegens).
    Target target = Target::host();
    std::vector<std::string> disabled_passes;  // read by the pipeline runner, not by passes
    // Set by the driver: compiles and runs a closed expression (no free variables) and returns
    // its value. fold_constants does nothing while it is null.
    std::function<runtime::NDArray(const Expr&)> evaluate;
    // Set by the driver from tuning records: the algorithm of a convolution that
    // alter_op_layout blocks and that Winograd can compute (3x3, stride 1, dilation 1, one
    // group, blocked data): 0 for the direct blocked form, or the output tile m of Winograd
    // F(m, 3) (2 or 4). `conv` is the nn.conv2d call, `in_block` / `out_block` the channel
    // blocks of its data and result. Null: always 0.
    std::function<int(const Call& conv, int64_t in_block, int64_t out_block)> conv2d_algorithm;
    // Set by the driver from tuning records: the channel block alter_op_layout gives values
    // with `channels` channels (one of `choices`, which are layout_block_choices(channels) of
    // ir/channel_block.h, less 0 where a convolution touching them could run as Winograd; 0
    // keeps them NCHW), or -1 for the rule's default. `convs` are the nn.conv2d calls it would
    // block that read or produce such values (what the choice is about, for a key). Asked once
    // per channel count and function, only where there is a choice. Null: always the default.
    std::function<int64_t(int64_t channels, const std::vector<const Call*>& convs,
                          const std::vector<int64_t>& choices)>
        layout_block;
    // Set by the driver from tuning records: the output-channel block of the weight of an
    // nn.conv2d that prepack_weights packs (one alter_op_layout left unblocked): 0 for the
    // direct form, 8, 16 or 32 (ops::conv2d_weight_block_choices), or -1 for nn.conv2d's rule.
    // Null: always the rule.
    std::function<int64_t(const Call& conv)> conv2d_weight_block;
    // Set by the driver (anvil compile --mixed-precision bf16): the half type to_mixed_precision
    // computes in, bfloat16 or float16; void: the pass changes nothing.
    DataType mixed_precision = DataType::void_();
};

// Requires: nothing.  Ensures: every node of every function is rebuilt, so its type is derived
// from the current parameter types; a UserError names the model node whose type rule fails.
// Checks that each function uses no variable it does not bind.
IRModule infer_types(const IRModule& m, const PassContext& ctx);
// Substitution for a shape override: `f` with its parameters replaced (positionally) by
// `params`, every type in the body re-derived. UserError when a new shape does not fit.
Ref<Function> rebind_params(const Ref<Function>& f, const std::vector<Ref<Var>>& params);

// Requires: nothing.  Ensures: a qnn.quantize of a conv2d, dense, concatenate, pool or
// element-moving op on qnn.dequantize'd operands (the QDQ form of ONNX's quantized models;
// constant scales and zero points, activations per tensor) is the QNN op on the integers, with
// requantize, and a relu or clip before it a clamp; other forms stay in floats.
IRModule fake_quantization_to_integer(const IRModule& m, const PassContext& ctx);

// Requires: typed.  Ensures: float32 products (conv2d, conv2d_transpose, dense, matmul,
// batch_matmul) take `half` (bfloat16 or float16) operands, sum in float32 and round their
// result to `half`; ops exact in `half` follow their operands; ops that need float32 (one table,
// graph/passes/to_mixed_precision.cpp) get float32 operands; each function returns the types it
// returned. Constants are converted at compile time where ctx.evaluate is set. `missing_ops`
// are the ops the table does not list that touched float32 values (kept in float32).
struct MixedPrecisionResult {
    IRModule module;
    std::vector<std::string> missing_ops;
};
MixedPrecisionResult convert_to_mixed_precision(const IRModule& m, DataType half,
                                                const PassContext& ctx);
// The pipeline's form: convert_to_mixed_precision to ctx.mixed_precision; UserError when that is
// void (the pipeline runs it only when a half type is asked for).
IRModule to_mixed_precision(const IRModule& m, const PassContext& ctx);

// Requires: ctx.evaluate (nothing happens without it).  Ensures: no qnn.quantize whose operands
// are all constants: each is the quantized constant (QNN ops stay).
IRModule fold_qnn_quantize(const IRModule& m, const PassContext& ctx);

// Requires: nothing.  Ensures: no QNN op (ops/qnn.h) is left: each is integer arithmetic on the
// core ops (fixed_point_multiply for requantization); UserError where a requantization's scales
// are not constants.
IRModule canonicalize_qnn(const IRModule& m, const PassContext& ctx);

// Requires: nothing.  Ensures: outside functions with a Compiler attribute (whose composites
// their code generator reads), no call of a nested function that is neither primitive nor has a
// Compiler attribute (a Composite region of graph/pattern/partition.h nothing offloads): its
// body stands in the call, the arguments in place of its parameters.
IRModule inline_composites(const IRModule& m, const PassContext& ctx);

// The BYOC passes (TVM's MergeComposite, AnnotateTarget, MergeCompilerRegions, PartitionGraph),
// run in this order for the external compilers of a composite target ("dnnl, llvm"); with none
// they change nothing. Their context forms take the compilers from ctx.target.
//
// Requires: typed.  Ensures: each match of each table entry, in table order, is a call of a
// function with Composite="<entry name>" (graph/pattern/partition.h).
IRModule merge_composite(const IRModule& m, const codegen::PatternTable& table);
IRModule merge_composite(const IRModule& m, const PassContext& ctx);
// Requires: typed.  Ensures: every call an external compiler in `compilers` takes (a composite
// of its pattern table, an op its support check accepts) is a one-call region: a call of a
// function with Compiler="<compiler>". UserError for a compiler nothing knows.
IRModule annotate_target(const IRModule& m, const std::vector<std::string>& compilers);
IRModule annotate_target(const IRModule& m, const PassContext& ctx);
// Requires: regions (annotate_target).  Ensures: regions of the same compiler joined by dataflow
// are one region wherever that makes no cycle; a region read outside at several results returns
// a tuple of them.
IRModule merge_compiler_regions(const IRModule& m, const PassContext& ctx);
// Requires: regions.  Ensures: every region has a global_symbol attribute,
// tvmgen_default_<compiler>_main_<i>, unique in the module.
IRModule partition_graph(const IRModule& m, const PassContext& ctx);

// Requires: ctx.evaluate (else no change).  Ensures: every maximal expression that depends on
// no variable (a call whose arguments are constants, transitively) and has a tensor type is
// replaced by one Constant holding its value; TupleGetItem of a constant tuple by the field.
IRModule fold_constants(const IRModule& m, const PassContext& ctx);

// Requires: nothing.  Ensures: no nn.batch_norm (becomes x * scale + shift with per-channel
// constants shaped to broadcast along its axis; computed here when the statistics are float
// constants). nn.layer_norm stays an op: it lowers to one fused kernel already, and its
// statistics depend on the input, so nothing folds.
IRModule simplify_inference(const IRModule& m, const PassContext& ctx);

// Requires: nothing.  Ensures: no two calls of the same op with equal attributes and the same
// (identical) arguments, no two equal TupleGetItems: later ones are replaced by the first.
IRModule eliminate_common_subexpr(const IRModule& m, const PassContext& ctx);

// Requires: nothing.  Ensures: no let binding whose variable is unused. Tuples keep all their
// fields (a field nobody reads is still computed by the op that makes the tuple).
IRModule dead_code_elimination(const IRModule& m, const PassContext& ctx);

// Requires: nothing.  Ensures: no reshape of a reshape, no transpose of a transpose (composed,
// or removed when the composition is the identity), no reshape to the input's shape, no cast to
// the input's dtype, no add/subtract of zero or multiply/divide by one (constants whose elements
// are all equal) where the result has the other operand's type.
IRModule simplify_expr(const IRModule& m, const PassContext& ctx);

// Requires: NCHW/OIHW nn.conv2d, nn.dense with (units, in) weights, constant weights.
// Ensures: multiply(conv2d(x, w), s) with s a constant per output channel (or scalar), also
// through a bias (nn.bias_add or add of a per-channel constant) between them, becomes
// conv2d(x, w * s) [+ b * s] when the conv's output has no other user; likewise for nn.dense.
IRModule fold_scale_axis(const IRModule& m, const PassContext& ctx);

// Requires: nothing.  Ensures: softmax(q · kᵀ [· c] [+ bias]) · v, written with
// nn.matmul / nn.batch_matmul, nn.softmax over the last axis and a scalar constant multiply or
// divide on the scores or on q, is nn.attention(q, k, v[, bias], scale) where the intermediate
// values have no other user and q, k, v share their batch dimensions; the head merge after it
// (a transpose of the heads axis after the rows, then a reshape) is nn.attention(...,
// merge_heads=True) where the transposed value has no other user (fuse_attention.cpp).
IRModule fuse_attention(const IRModule& m, const PassContext& ctx);

// Requires: after simplify_expr.  Ensures: the arithmetic of a layer
// norm over trailing axes (mean, subtract, mean of the square, divide by sqrt(var + eps),
// [* gamma], [+ beta]) is nn.layer_norm where its intermediate values have no other user
// (fuse_layer_norm.cpp).
IRModule fuse_layer_norm(const IRModule& m, const PassContext& ctx);

// Requires: after fold_scale_axis (which needs OIHW weights).
// Ensures: nn.conv2d with a constant float32 weight and static shapes, groups == 1 or
// depthwise, whose output channel count has a block (b, a function of the channel count:
// ctx.layout_block's choice, else default_layout_block: 16 or 8 where they divide it, see
// ir/channel_block.h; a choice of 0 leaves it nn.conv2d) is nn.conv2d_nchwc on channel-blocked
// data (NCHW<b>c, or NCHW when the input's count has no block) with its weight
// under a layout_transform to OIHW<i>i<o>o; elementwise and broadcast ops without an axis attribute
// whose operand is blocked compute blocked, and so do nn.max_pool2d / nn.avg_pool2d (their
// layout attribute), nn.bias_add (an add of the blocked bias) and concatenate along the
// channels; every other consumer reads a layout_transform back
// to NCHW, made once per value. Types at the function's boundary are unchanged. A convolution
// for which ctx.conv2d_algorithm returns m = 2 or 4 becomes nn.conv2d_winograd_nchwc of the
// blocked data and nn.winograd_weight_transform(weight) instead.
IRModule alter_op_layout(const IRModule& m, const PassContext& ctx);
// Whether Winograd can compute `conv` (an nn.conv2d call) on data of channel block `in_block`:
// a static float32 3x3 kernel, stride 1, dilation 1, one group, blocked data (in_block > 0).
bool winograd_applicable(const Call& conv, int64_t in_block);

// Requires: after fold_scale_axis (which needs OIHW weights).
// Ensures: nn.conv2d and nn.dense whose weight is a float constant call nn.conv2d_packed /
// nn.dense_packed on nn.conv2d_pack_weight / nn.dense_pack_weight of it (the blocked layout
// their kernels read), so that fold_constants packs at compile time; convs whose weight the
// pack op leaves unblocked (depthwise) are unchanged. A block ctx.conv2d_weight_block chooses
// is the pack op's `block`; a choice of 0 is nn.conv2d_packed of the weight as it is (the direct
// form).
IRModule prepack_weights(const IRModule& m, const PassContext& ctx);

// Requires: a dataflow body (lets are fusion barriers).  Ensures: every op call in a
// non-primitive function lies in exactly one primitive Function called from it
// (make_call_function). Groups follow TVM's dominator-based algorithm over OpPattern: an
// OutEWiseFusable anchor (conv2d, dense) takes its elementwise/broadcast successors (bias,
// activation, a residual add); injective chains join; a reduction takes the injective ops
// before it; opaque ops stay alone. Group parameters are the group's external inputs, tensor
// constants included (so groups differing only in weights are structurally equal); scalar
// constants stay inside. opt_level 0: one op per group.
IRModule fuse_ops(const IRModule& m, const PassContext& ctx);

// Not a pipeline pass: TVM Relax's BindParams. Ensures: the parameters of `function` named in
// `params` are gone, replaced in its body by Constants holding the values (weights the pipeline
// then folds and pre-packs like imported ones). UserError when the module has no such function,
// a name is none of its parameters, or a value's shape or dtype differs from the parameter's type.
IRModule bind_params(const IRModule& m, const std::string& function,
                     const std::map<std::string, runtime::NDArray>& params);

}  // namespace anvil::graph
