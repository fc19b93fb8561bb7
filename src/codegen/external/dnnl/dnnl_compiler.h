// oneDNN as an external code generator (BYOC): the worked example of docs/external_codegen.md.
//
//   dnnl_patterns.cpp  the pattern table: dnnl.conv2d and dnnl.dense composites, a convolution
//                      or dense layer with its bias, a residual sum and an activation, which
//                      oneDNN computes as one primitive with post-ops; dnnl.qnn.conv2d and
//                      dnnl.qnn.dense, an int8 layer with its requantize, clip and cast
//   dnnl_support.cpp   which single ops oneDNN takes (eltwise, binary, pooling, softmax,
//                      reshapes; convolutions and dense layers outside a composite)
//   dnnl_codegen.cpp   a region function as steps of oneDNN primitives with their weights, in
//                      the format of dnnl_format.h
//   runtime/           libanvil_runtime_dnnl.so: the primitives, created once at load
//
// Everything is float32 with static shapes, but the int8 layers' 8-bit data and results; the
// checks refuse the rest, which then compiles natively.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/external/external_compiler.h"

namespace anvil::codegen::dnnl {

const ExternalCompiler& dnnl_compiler();

// The composites oneDNN takes for kernels compiled for `target`: the int8 layers only where
// oneDNN computes them exactly on its CPUs (sums_int8_exactly).
PatternTable dnnl_pattern_table(const Target& target);
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

// An int8 convolution or dense layer with its requantize, read from the body of a
// dnnl.qnn.conv2d / dnnl.qnn.dense composite:
//
//   [nn.pad of NCHW data's height and width with its zero point ->]
//   qnn.conv2d|qnn.dense(data: uint8|int8, weight: int8 constant, data_zp, weight_zp = 0, ...)
//   [+ int32 constant bias per output channel]
//   -> qnn.requantize(in_scale (per channel or one), in_zp, out_scale, out_zp)
//   [-> clip to integer bounds] [-> cast to uint8|int8, after a clip to its range]
//
// which oneDNN computes as one primitive: dst = saturate(clip(round((acc + bias) * scale)) +
// dst_zero_point), acc the sum over (data - src_zero_point) * weight, round half to even of the
// float32 product: requantize's compute_dtype "float32" exactly (where oneDNN's kernels sum
// exactly: VNNI or AMX, not the vpmaddubsw of older CPUs, and sums below 2^24); its "float64"
// (ONNX QLinearConv) and fixed-point ("int64") roundings may differ by one step where the
// products round apart.
// `valid` is false when the chain is not of that form.
// (Which of these oneDNN computes exactly depends on the CPU: sums_int8_exactly.)
struct QnnLayer {
    bool valid = false;
    const graph::Call* core = nullptr;  // qnn.conv2d or qnn.dense
    graph::Expr data;                   // the core's data, or the padded data
    std::vector<int64_t> padding;       // a convolution's, with the pad's added
    // Per output channel: the int32 bias less requantize's input zero point; empty when both
    // are absent or zero.
    std::vector<int32_t> bias;
    int32_t src_zero_point = 0;
    int32_t dst_zero_point = 0;
    std::vector<float> scales;  // in_scale / out_scale: one, or one per output channel
    std::optional<std::pair<double, double>> clip;  // bounds before dst_zero_point is added
    DataType dst_dtype;                             // uint8 or int8
};
// `padded`: the data is an nn.pad (folded into the convolution's padding), not read as data.
QnnLayer read_qnn_layer(const graph::Expr& root, bool padded);

// Whether oneDNN's int8 kernels compute every int8 layer exactly on CPUs that run code for
// `target`: with VNNI (AVX-512 or AVX; oneDNN's avx2_vnni kernels use vpdpbusd too) or AMX they
// sum u8 x s8 products in int32, as does everything on other architectures. On x86 CPUs without
// them (AVX2, AVX-512 before Cascade Lake) their kernels add pairs of products in int16 with
// saturation (vpmaddubsw) first, which is exact only while every |weight| <= 64 (255 * 64 * 2 <
// 2^15: onnxruntime's and PyTorch's reduce_range keep to 7 bits for this), and their
// convolutions of int8 data halve the weights (oneDNN's scale adjustment against that
// saturation), rounding odd ones.
bool sums_every_int8_exactly(const Target& target);
// Whether oneDNN computes `layer` exactly: on every CPU of the target where `every_exactly`
// (sums_every_int8_exactly), else only uint8 data with 7-bit weights. Other layers stay native.
bool sums_int8_exactly(const QnnLayer& layer, bool every_exactly);

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
