// The intrinsic functions a Call may name. Math intrinsics are pure, elementwise, and defined for
// floating-point types; codegen maps them to LLVM intrinsics or libm, and tir's lower_intrinsics
// replaces the transcendental ones by vectorizable polynomials.
#pragma once

#include <string>

namespace anvil::intrin {

inline constexpr const char* kExp = "exp";
inline constexpr const char* kLog = "log";
inline constexpr const char* kSqrt = "sqrt";
inline constexpr const char* kRsqrt = "rsqrt";
inline constexpr const char* kTanh = "tanh";
inline constexpr const char* kSigmoid = "sigmoid";
inline constexpr const char* kErf = "erf";
inline constexpr const char* kPow = "pow";
inline constexpr const char* kAbs = "abs";
inline constexpr const char* kFloor = "floor";
inline constexpr const char* kCeil = "ceil";
inline constexpr const char* kRound = "round";  // half to even, as ONNX and NumPy
inline constexpr const char* kFma = "fma";
// Trigonometric and hyperbolic functions (libm).
inline constexpr const char* kSin = "sin";
inline constexpr const char* kCos = "cos";
inline constexpr const char* kTan = "tan";
inline constexpr const char* kAsin = "asin";
inline constexpr const char* kAcos = "acos";
inline constexpr const char* kAtan = "atan";
inline constexpr const char* kSinh = "sinh";
inline constexpr const char* kCosh = "cosh";
inline constexpr const char* kAsinh = "asinh";
inline constexpr const char* kAcosh = "acosh";
inline constexpr const char* kAtanh = "atanh";
// Reinterprets the bits of its argument as the call's dtype (same total width).
inline constexpr const char* kReinterpret = "reinterpret";
// if_then_else(cond, a, b): like Select, but evaluates only the chosen branch, so a branch may
// read memory that is valid only under its condition (padding reads A[i - 1] only when i >= 1).
// A vector condition chooses per lane. Code generation then guards `a` only when it is a load
// (a masked load); vectorize_loops makes every other vector branch safe to evaluate.
inline constexpr const char* kIfThenElse = "if_then_else";
// Hint for the code generator: the condition is usually true.
inline constexpr const char* kLikely = "likely";
// prefetch(buf[index]), evaluated for its effect: asks the CPU to bring the cache line holding
// that element closer (a hint; it reads nothing and never faults, so the element may lie past the
// buffer's end). Its load is an address, not an access. Made by tir's prefetch_streams.
inline constexpr const char* kPrefetch = "prefetch";

// Bit operations on integers (and bool for and/or/xor/not), lane-wise, of the call's type:
// bitwise_and(a, b), bitwise_or, bitwise_xor, bitwise_not(a), shift_left(a, n) and
// shift_right(a, n), which is arithmetic (sign-filling) for signed types and logical for unsigned
// ones. As in LLVM, a shift amount outside [0, bits) is undefined; the ops that shift by data
// (ops/elementwise.cpp) define those amounts themselves.
inline constexpr const char* kBitwiseAnd = "bitwise_and";
inline constexpr const char* kBitwiseOr = "bitwise_or";
inline constexpr const char* kBitwiseXor = "bitwise_xor";
inline constexpr const char* kBitwiseNot = "bitwise_not";
inline constexpr const char* kShiftLeft = "shift_left";
inline constexpr const char* kShiftRight = "shift_right";

// fixed_point_multiply_upward(x, m, s), _tonearest, _tflite and _tflite_rshift on int32 lanes:
// x * m * 2^(s - 31) rounded and saturated to int32, the requantization of integer kernels (qnn's
// fixed_point_multiply op, m in [2^30, 2^31) and s in [-31, 30] from a real ratio). upward
// rounds half up in 64 bits, tonearest half away from zero; tflite is TFLite's
// MultiplyByQuantizedMultiplier (a saturating left shift, the rounded doubling high multiply,
// the rounding right shift), bit for bit; tflite_rshift the same where every s <= 0 (no left
// shift: a shorter expansion; a positive s counts as 0). Pure and elementwise; expanded only by
// the code generator (ir/fixed_point.h), so each argument is evaluated once.
inline constexpr const char* kFixedPointMultiplyUpward = "fixed_point_multiply_upward";
inline constexpr const char* kFixedPointMultiplyToNearest = "fixed_point_multiply_tonearest";
inline constexpr const char* kFixedPointMultiplyTflite = "fixed_point_multiply_tflite";
inline constexpr const char* kFixedPointMultiplyTfliteRightShift =
    "fixed_point_multiply_tflite_rshift";
// dot_u8s8(a, b) on int32 lanes: each lane of a holds four unsigned bytes, each lane of b four
// signed bytes (little-endian), and the result lane is the sum of their four products, exact in
// int32. What AVX-512 VNNI's vpdpbusd computes (codegen uses it where the target has VNNI, and
// adds an accumulator `acc + dot_u8s8(a, b)` in the same instruction); the quantized
// convolutions' inner product of four input channels (ops/conv.cpp).
inline constexpr const char* kDotU8S8 = "dot_u8s8";
// dot_bf16(a, b) -> float32 lanes from int32 lanes: each lane of a and b holds two bfloat16
// (element 0 in the low half), and the result lane is a0 * b0 + a1 * b1 in float32. What
// AVX-512 BF16's vdpbf16ps computes (codegen uses it where the target has avx512bf16, with an
// accumulator `acc + dot_bf16(a, b)` folded in); the bfloat16 convolutions' inner product of two
// input channels (ops/conv_words.cpp).
inline constexpr const char* kDotBF16 = "dot_bf16";

// AMX tile products (Intel AMX-TILE with AMX-BF16 / AMX-INT8), made by tir's tensorize_amx,
// each evaluated for its effect (int32 0) on the thread's tile registers 0..2, numbered by
// constant arguments:
//   amx_tile_config(rows0, bytes0, rows1, bytes1, rows2, bytes2): asks the OS for the tile
//     state once per process (anvil_request_amx; a kernel fails where the OS refuses), then
//     configures tiles 0..2 (palette 1) as `rows` rows (1..16) of `bytes` bytes (4..64, whole
//     words); amx_tile_release(): returns the tiles to their initial state (Intel's advice at
//     the end of tile work: a thread holding tile state saves 8 KiB more per context switch).
//   amx_tile_zero(t); amx_tile_load(t, buf[index], stride) and amx_tile_store(t, buf[index],
//     stride): the tile's rows from / to the element buf[index] on, `stride` bytes apart
//     (the load is an address, not an access);
//   amx_tile_dot_bf16(c, a, b) (tdpbf16ps) and amx_tile_dot_u8s8(c, a, b) (tdpbusd): tile c
//     (float32 / int32, M x N) += a (M x K words) times b (K x N words), the products of words
//     those of dot_bf16 / dot_u8s8. uint8 x int8 sums are exact in int32 (as dot_u8s8's);
//     bfloat16 ones add each product to the float32 sum with one rounding (an FMA, subnormals
//     flushed), where acc + dot_bf16 may round each pair's sum first: they agree within float32
//     rounding.
inline constexpr const char* kAmxTileConfig = "amx_tile_config";
inline constexpr const char* kAmxTileRelease = "amx_tile_release";
inline constexpr const char* kAmxTileZero = "amx_tile_zero";
inline constexpr const char* kAmxTileLoad = "amx_tile_load";
inline constexpr const char* kAmxTileStore = "amx_tile_store";
inline constexpr const char* kAmxTileDotBF16 = "amx_tile_dot_bf16";
inline constexpr const char* kAmxTileDotU8S8 = "amx_tile_dot_u8s8";
// The tiles the calls above may name (the configuration's).
inline constexpr int kAmxTiles = 3;
// True for the AMX calls above (effects on the tile registers and memory; never pure).
bool is_amx(const std::string& name);

// True for the names above that take and return floats elementwise.
bool is_math(const std::string& name);
// True for the bit operations above: pure, elementwise, on integers.
bool is_bitwise(const std::string& name);
// True for the four fixed_point_multiply intrinsics.
bool is_fixed_point_multiply(const std::string& name);
// True for the pure elementwise integer intrinsics: the bit operations, dot_u8s8 and
// fixed_point_multiply.
bool is_integer_elementwise(const std::string& name);
// True for the packed dot products, dot_u8s8 and dot_bf16: pure, elementwise on int32 words.
bool is_dot(const std::string& name);
// Number of arguments the intrinsic takes, or -1 for an unknown name.
int arity(const std::string& name);

}  // namespace anvil::intrin
