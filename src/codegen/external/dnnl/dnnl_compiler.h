// oneDNN as an external code generator (BYOC): the worked example of docs/external_codegen.md.
//
//   dnnl_patterns.cpp  the pattern table: dnnl.conv2d and dnnl.dense composites, a convolution
//                      or dense layer with its bias, a residual sum and an activation, which
//                      oneDNN computes as one primitive with post-ops
//   dnnl_support.cpp   which single ops oneDNN takes (eltwise, binary, pooling, softmax,
//                      reshapes; convolutions and dense layers outside a composite)
//   dnnl_codegen.cpp   a region function as steps of oneDNN primitives with their weights, in
//                      the format of dnnl_format.h
//   runtime/           libanvil_runtime_dnnl.so: the primitives, created once at load
//
// Everything is float32 with static shapes; the checks refuse the rest, which then compiles
// natively.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "codegen/external/external_compiler.h"

namespace anvil::codegen::dnnl {

const ExternalCompiler& dnnl_compiler();

PatternTable dnnl_pattern_table();
std::vector<std::pair<std::string, SupportCheck>> dnnl_support_checks();
std::string dnnl_codegen(const std::vector<ExternalRegion>& regions);

// A convolution or dense layer and what oneDNN applies after it as post-ops, read from the body
// of a dnnl.conv2d / dnnl.dense composite (or a lone nn.conv2d / nn.dense call): the core call,
// then optionally a per-channel bias, a same-shaped residual added (a sum post-op) and an
// activation, in that order. `valid` is false when the chain is not of that form.
struct LayerChain {
    bool valid = false;
    const graph::Call* core = nullptr;  // nn.conv2d or nn.dense
    graph::Expr bias;                   // a constant, or undefined
    graph::Expr residual;               // the summed value, or undefined
    const graph::Call* activation = nullptr;
};
LayerChain read_layer_chain(const graph::Expr& root);

// Whether oneDNN computes this activation call (relu, clip, gelu, sigmoid, tanh, ...) as an
// eltwise primitive or post-op.
bool is_eltwise(const graph::Call& call);
// Float32 with a static shape.
bool is_static_float(const graph::Type& t);
// The static shape of a tensor type or of an expression's; empty when it is none.
std::vector<int64_t> shape_of(const graph::Type& type);
std::vector<int64_t> shape_of(const graph::Expr& e);
// The padding [top, left, bottom, right] oneDNN pools an nn.max_pool2d / nn.avg_pool2d call with:
// its own, and in ceil mode as much more at the bottom and right as the last window needs.
std::vector<int64_t> dnnl_pool_padding(const graph::Call& pool);

}  // namespace anvil::codegen::dnnl
