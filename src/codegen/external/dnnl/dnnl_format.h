// What dnnl_codegen.cpp writes and libanvil_runtime_dnnl.so reads: the regions of one model.
//
//   bytes  = "ANVDNNL1" | uint64 little-endian n | n bytes of JSON | zeros to a multiple of 64 |
//            the weights (each at a multiple of 64 from here)
//   JSON   = {"version": 2, "functions": [function...]}
//   function = {"symbol": "tvmgen_default_dnnl_main_0",
//               "values": [[1, 64, 56, 56], ...],        // every value's shape
//               "dtypes": ["f32", "u8", ...],            // and element type: f32 u8 s8 s32
//               "inputs": [0, 3], "outputs": [9],         // value ids, in call order
//               "constants": [{"value": 1, "offset": 0}], // bytes in the weights section
//               "steps": [step...]}                       // in execution order
//   step = {"op": "conv2d", "src": v, "weights": v, "bias": v | -1, "sum": v | -1, "dst": v,
//           "strides": [h, w], "padding": [t, l, b, r], "dilation": [h, w], "groups": g,
//           "post_op": eltwise | null, "quantized": quantized (optional)}
//        | {"op": "inner_product", "src", "weights" ([N, K]), "bias", "dst", "post_op",
//           "quantized" (optional)}
//        | {"op": "matmul", "src0", "src1", "dst", "transpose_a", "transpose_b"}
//        | {"op": "eltwise", "src", "dst", "alg", "alpha", "beta"}
//        | {"op": "binary", "alg": "add|sub|mul|div|max|min", "src0", "src1", "dst"}
//        | {"op": "pool", "alg": "max|avg_include|avg_exclude", "src", "dst", "kernel", "strides",
//           "padding"}
//        | {"op": "softmax", "src", "dst", "axis"}
//        | {"op": "concat", "srcs": [v, ...], "dst", "axis"}
//        | {"op": "copy", "src", "dst"}        // a reshape: the same elements, another shape
//   eltwise = {"alg": "relu|clip|gelu_erf|gelu_tanh|logistic|tanh|...", "alpha", "beta"}
//   quantized = {"src_zero_point": int, "dst_zero_point": int, "scales": [float, ...]}
//        an int8 layer: src u8 or s8, weights s8, bias s32, dst u8 or s8, no sum; dst =
//        saturate(post_op(round((sum of (src - src_zero_point) * weights + bias) * scale)) +
//        dst_zero_point), rounding half to even, with one scale or one per output channel.
//        Every other step is f32.
// A binary step's src1 has at most the rank of dst; aligned with dst's trailing dimensions (numpy
// broadcasting), each of its dimensions is 1 or dst's. libanvil_runtime_dnnl.so checks all of it
// (runtime/dnnl_check.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace anvil::codegen::dnnl {

inline constexpr char kDnnlMagic[] = "ANVDNNL1";
inline constexpr int kDnnlFormatVersion = 2;

// The element types of values: the format's name, the bytes of one element, and Anvil's name of
// the type (DataType::str, and the caller's tensors').
struct ValueType {
    const char* name;
    int bytes;
    const char* anvil;
};
inline constexpr ValueType kValueTypes[] = {
    {"f32", 4, "float32"}, {"u8", 1, "uint8"}, {"s8", 1, "int8"}, {"s32", 4, "int32"}};

// The value type whose format name (or, with `anvil`, Anvil name) is `name`; null when none is.
inline const ValueType* find_value_type(const std::string& name, bool anvil = false) {
    for (const ValueType& t : kValueTypes) {
        if (name == (anvil ? t.anvil : t.name)) return &t;
    }
    return nullptr;
}

// Whether oneDNN's int8 kernels for x86 CPUs without VNNI or AMX compute a layer exactly: they
// add pairs of u8 x s8 products in saturating int16 (255 * 64 * 2 < 2^15 holds only while every
// |weight| <= 64) and halve the weights of convolutions of int8 data. The compiler's check
// (sums_int8_exactly) and the runtime's (dnnl_module.cpp) both ask this.
inline bool sums_exactly_without_vnni(const int8_t* weights, size_t count, bool int8_data_conv) {
    if (int8_data_conv) return false;
    for (size_t i = 0; i < count; ++i) {
        if (weights[i] < -64 || weights[i] > 64) return false;
    }
    return true;
}

}  // namespace anvil::codegen::dnnl
