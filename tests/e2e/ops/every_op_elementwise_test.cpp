// The every-op cases of the elementwise families (elementwise.cpp, activation.cpp): each unary
// op on a 3x5x7 tensor (105 elements: no vector width divides it) drawn from the op's domain,
// each binary op on numpy broadcasts with size-1 axes, and the activations with attributes;
// references are the C++ standard library's functions in double precision.
#include <algorithm>
#include <cmath>

#include "every_op.h"
#include "graph/text_base64.h"

namespace anvil::every_op {
namespace {

struct Unary {
    const char* op;
    std::function<double(double)> f;
    double lo = -1, hi = 1;  // the input's range
    const char* attrs = "";  // text after the operand
    double tol = 1e-5;
};

double sigmoid(double x) {
    return 1 / (1 + std::exp(-x));
}
double softplus(double x) {
    return std::log1p(std::exp(x));
}

OpCase unary_case(const Unary& u, uint32_t seed) {
    Shape s{3, 5, 7};
    NDArray x = rand_f32(s, seed, u.lo, u.hi);
    std::vector<double> want;
    for (double v : values_of(x)) want.push_back(u.f(v));
    std::string text = "def @main(%x: " + tensor_type(s) + ") { " + u.op + "(%x" + u.attrs + ") }";
    return {std::string(u.op) + " 3x5x7", text, {x}, tensor_want(s, want, u.tol)};
}

std::vector<Unary> unary_ops() {
    const double pi = std::acos(-1.0);
    return {
        {"negative", [](double x) { return -x; }},
        {"abs", [](double x) { return std::fabs(x); }},
        {"exp", [](double x) { return std::exp(x); }, -4, 4},
        {"log", [](double x) { return std::log(x); }, 0.05, 5},
        {"sqrt", [](double x) { return std::sqrt(x); }, 0, 5},
        {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.1, 5},
        {"tanh", [](double x) { return std::tanh(x); }, -4, 4},
        {"sigmoid", sigmoid, -6, 6},
        {"erf", [](double x) { return std::erf(x); }, -3, 3},
        {"floor", [](double x) { return std::floor(x); }, -4, 4},
        {"ceil", [](double x) { return std::ceil(x); }, -4, 4},
        // Round half to even (ONNX Round); random inputs do not fall on halves.
        {"round", [](double x) { return std::nearbyint(x); }, -4, 4},
        {"nn.relu", [](double x) { return std::max(x, 0.0); }},
        {"sign", [](double x) { return double((x > 0) - (x < 0)); }},
        {"sin", [](double x) { return std::sin(x); }, -pi, pi},
        {"cos", [](double x) { return std::cos(x); }, -pi, pi},
        {"tan", [](double x) { return std::tan(x); }, -1.2, 1.2},
        {"asin", [](double x) { return std::asin(x); }, -0.99, 0.99},
        {"acos", [](double x) { return std::acos(x); }, -0.99, 0.99},
        {"atan", [](double x) { return std::atan(x); }, -5, 5},
        {"sinh", [](double x) { return std::sinh(x); }, -3, 3},
        {"cosh", [](double x) { return std::cosh(x); }, -3, 3},
        {"asinh", [](double x) { return std::asinh(x); }, -5, 5},
        {"acosh", [](double x) { return std::acosh(x); }, 1.01, 5},
        {"atanh", [](double x) { return std::atanh(x); }, -0.95, 0.95},
        // activation.cpp
        {"clip", [](double x) { return std::clamp(x, -0.25, 0.5); }, -1, 1,
         ", a_min=-0.25, a_max=0.5"},
        {"nn.leaky_relu", [](double x) { return x < 0 ? 0.125 * x : x; }, -1, 1, ", alpha=0.125"},
        {"nn.gelu", [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -3, 3},
        {"nn.hardswish", [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; }, -5, 5},
        {"nn.hardsigmoid", [](double x) { return std::clamp(0.25 * x + 0.375, 0.0, 1.0); }, -4, 4,
         ", alpha=0.25, beta=0.375"},
        {"nn.softplus", softplus, -5, 5},
        {"nn.elu", [](double x) { return x < 0 ? 0.75 * (std::exp(x) - 1) : x; }, -3, 3,
         ", alpha=0.75"},
        {"nn.selu", [](double x) { return 1.0507 * (x < 0 ? 1.6733 * (std::exp(x) - 1) : x); }, -3,
         3, ", alpha=1.6733, gamma=1.0507"},
        {"nn.mish", [](double x) { return x * std::tanh(softplus(x)); }, -4, 4},
    };
}

struct Binary {
    const char* op;
    std::function<double(double, double)> f;
    double xlo = -1, xhi = 1, ylo = -1, yhi = 1;
    // Small integers as floats, so that comparisons meet equal values.
    bool integral = false;
    const char* out_dtype = "float32";
};

std::vector<Binary> binary_ops() {
    return {
        {"add", [](double a, double b) { return a + b; }},
        {"subtract", [](double a, double b) { return a - b; }},
        {"multiply", [](double a, double b) { return a * b; }},
        {"divide", [](double a, double b) { return a / b; }, -1, 1, 0.25, 2},
        {"power", [](double a, double b) { return std::pow(a, b); }, 0.1, 3, -2, 2},
        {"maximum", [](double a, double b) { return std::max(a, b); }},
        {"minimum", [](double a, double b) { return std::min(a, b); }},
        {"equal", [](double a, double b) { return double(a == b); }, -2, 2, -2, 2, true, "bool"},
        {"not_equal", [](double a, double b) { return double(a != b); }, -2, 2, -2, 2, true,
         "bool"},
        {"less", [](double a, double b) { return double(a < b); }, -2, 2, -2, 2, true, "bool"},
        {"less_equal", [](double a, double b) { return double(a <= b); }, -2, 2, -2, 2, true,
         "bool"},
        {"greater", [](double a, double b) { return double(a > b); }, -2, 2, -2, 2, true, "bool"},
        {"greater_equal", [](double a, double b) { return double(a >= b); }, -2, 2, -2, 2, true,
         "bool"},
        // Truncated (C fmod) and floored (Python %) remainders, divisors of both signs.
        {"mod", [](double a, double b) { return std::fmod(a, b); }, -5, 5, -2, 2, true},
        {"floor_mod", [](double a, double b) { return a - b * std::floor(a / b); }, -5, 5, -2, 2,
         true},
    };
}

// The broadcasts the binary cases cycle through: trailing size-1 axes, size-1 axes on both
// sides, a lower rank, a scalar.
const std::vector<std::pair<Shape, Shape>> kBroadcasts = {
    {{3, 5, 7}, {5, 1}}, {{1, 5, 1}, {3, 1, 7}}, {{13}, {3, 1}}, {{2, 3, 5}, {}}};

OpCase binary_case(const Binary& b, size_t k) {
    auto [xs, ys] = kBroadcasts[k % kBroadcasts.size()];
    uint32_t seed = 100 + static_cast<uint32_t>(k);
    NDArray x, y;
    if (b.integral) {
        x = array_of(xs, values_of(rand_int(xs, seed, int64_t(b.xlo), int64_t(b.xhi))));
        y = array_of(ys, values_of(rand_int(ys, seed + 1, int64_t(b.ylo), int64_t(b.yhi))));
        // Remainders by zero are undefined: divisors from {-2, -1, 1, 2}.
        if (std::string(b.op).find("mod") != std::string::npos) {
            std::vector<double> v = values_of(y);
            for (double& d : v) d = d == 0 ? 1 : d;
            y = array_of(ys, v);
        }
    } else {
        x = rand_f32(xs, seed, b.xlo, b.xhi);
        y = rand_f32(ys, seed + 1, b.ylo, b.yhi);
    }
    Shape out = broadcast_shapes(xs, ys);
    std::vector<double> xv = values_of(x), yv = values_of(y), want;
    for_each_index(out, [&](const Shape& i) {
        want.push_back(b.f(xv[broadcast_offset(i, xs)], yv[broadcast_offset(i, ys)]));
    });
    std::string text = "def @main(%x: " + tensor_type(xs) + ", %y: " + tensor_type(ys) + ") { " +
                       b.op + "(%x, %y) }";
    Want w = tensor_want(out, want, std::string(b.out_dtype) == "bool" ? 0 : 1e-5, b.out_dtype);
    return {std::string(b.op) + " broadcast " + std::to_string(k % kBroadcasts.size()),
            text,
            {x, y},
            w};
}

// Integer divide, mod and floor_mod never trap: a divisor of 0 gives 0 and INT_MIN / -1 wraps to
// INT_MIN (its remainder is 0), as ops/elementwise.cpp documents; the other quotients truncate
// (mod takes the dividend's sign, floor_mod the divisor's). The reference is exact (128-bit);
// the harness compares as doubles, exactly below 2^53.
int64_t integer_quotient(const std::string& op, int64_t a, int64_t b, int64_t int_min) {
    if (b == 0) return 0;
    if (b == -1) return op == "divide" ? (a == int_min ? int_min : -a) : 0;
    __int128 q = __int128{a} / b, r = __int128{a} % b;
    if (op == "divide") return static_cast<int64_t>(q);
    if (op == "mod") return static_cast<int64_t>(r);
    return static_cast<int64_t>(r != 0 && ((r < 0) != (b < 0)) ? r + b : r);
}

std::vector<double> as_doubles(const std::vector<int64_t>& v) {
    return std::vector<double>(v.begin(), v.end());
}

// Each op on int32 and int64, divisors 0, -1, INT_MIN and small ones broadcast against extreme
// dividends; one fused chain of all three; uint8 by 0.
std::vector<OpCase> integer_division_cases() {
    std::vector<OpCase> cases;
    for (const char* dtype : {"int32", "int64"}) {
        bool i32 = std::string(dtype) == "int32";
        int64_t int_min = i32 ? INT32_MIN : INT64_MIN;
        int64_t int_max = i32 ? INT32_MAX : (int64_t{1} << 53);
        // Values exact as doubles (the harness's inputs pass through doubles).
        int64_t low = i32 ? int_min + 2 : -(int64_t{1} << 62);
        std::vector<int64_t> a = {int_min, low, -7, -1, 0, 1, 7, 13, int_max};
        std::vector<int64_t> b = {0, -1, 1, -3, 2, int_min};
        Shape as{9, 1}, bs{6};
        for (const char* op : {"divide", "mod", "floor_mod"}) {
            std::vector<int64_t> want;
            for (int64_t x : a) {
                for (int64_t y : b) want.push_back(integer_quotient(op, x, y, int_min));
            }
            cases.push_back(
                {std::string(op) + " " + dtype + " by 0, -1 and INT_MIN",
                 "def @main(%a: " + tensor_type(as, dtype) + ", %b: " + tensor_type(bs, dtype) +
                     ") { " + op + "(%a, %b) }",
                 {array_of(as, as_doubles(a), dtype), array_of(bs, as_doubles(b), dtype)},
                 tensor_want({9, 6}, as_doubles(want), 0, dtype)});
        }
        // divide(a, b) + mod(a, b) * floor_mod(b, a): one fused kernel, every divisor special.
        Shape s{5};
        std::vector<int64_t> x = {int_min, 5, 0, -9, 4}, y = {-1, 0, 0, 0, -1}, want;
        for (size_t i = 0; i < x.size(); ++i) {
            want.push_back(integer_quotient("divide", x[i], y[i], int_min) +
                           integer_quotient("mod", x[i], y[i], int_min) *
                               integer_quotient("floor_mod", y[i], x[i], int_min));
        }
        cases.push_back({std::string("fused divide, mod, floor_mod ") + dtype + " by 0 and -1",
                         "def @main(%a: " + tensor_type(s, dtype) +
                             ", %b: " + tensor_type(s, dtype) +
                             ") { add(divide(%a, %b), multiply(mod(%a, %b), floor_mod(%b, %a))) }",
                         {array_of(s, as_doubles(x), dtype), array_of(s, as_doubles(y), dtype)},
                         tensor_want(s, as_doubles(want), 0, dtype)});
    }
    // Constant operands: fold_constants computes the result while compiling (where a trap
    // killed the compiler).
    std::vector<int32_t> c0 = {7, INT32_MIN, -7, 9}, c1 = {0, -1, 0, 2};
    auto constant = [](int index, const std::vector<int32_t>& v) {
        return "meta[Constant][" + std::to_string(index) + "]: " + tensor_type({4}, "int32") +
               " = \"" +
               graph::text::base64_encode(reinterpret_cast<const uint8_t*>(v.data()),
                                          v.size() * sizeof(int32_t)) +
               "\"\n";
    };
    std::vector<int64_t> folded;
    for (size_t i = 0; i < c0.size(); ++i) {
        folded.push_back(integer_quotient("divide", c0[i], c1[i], INT32_MIN) +
                         integer_quotient("mod", c0[i], c1[i], INT32_MIN) +
                         integer_quotient("floor_mod", c0[i], c1[i], INT32_MIN));
    }
    cases.push_back({"divide, mod, floor_mod int32 constants by 0 and -1, folded",
                     "def @main(%x: " + tensor_type({4}, "int32") +
                         ") {\n  %0 = divide(meta[Constant][0], meta[Constant][1]);\n"
                         "  %1 = mod(meta[Constant][0], meta[Constant][1]);\n"
                         "  %2 = floor_mod(meta[Constant][0], meta[Constant][1]);\n"
                         "  add(%x, add(%0, add(%1, %2)))\n}\n#[metadata]\n" +
                         constant(0, c0) + constant(1, c1),
                     {array_of({4}, {0, 0, 0, 0}, "int32")},
                     tensor_want({4}, as_doubles(folded), 0, "int32")});
    // Unsigned: only 0 is special.
    std::vector<int64_t> u = {0, 1, 200, 255}, v = {0, 0, 7, 255};
    for (const char* op : {"divide", "mod", "floor_mod"}) {
        std::vector<int64_t> want;
        for (size_t i = 0; i < u.size(); ++i) want.push_back(integer_quotient(op, u[i], v[i], 0));
        cases.push_back(
            {std::string(op) + " uint8 by 0",
             "def @main(%a: " + tensor_type({4}, "uint8") + ", %b: " + tensor_type({4}, "uint8") +
                 ") { " + op + "(%a, %b) }",
             {array_of({4}, as_doubles(u), "uint8"), array_of({4}, as_doubles(v), "uint8")},
             tensor_want({4}, as_doubles(want), 0, "uint8")});
    }
    return cases;
}

// ---- bitwise ops and shifts ------------------------------------------------------------------

// `v` wrapped to a `bits`-wide integer, signed or not.
int64_t wrap_bits(uint64_t v, int bits, bool is_signed) {
    if (bits == 64) return static_cast<int64_t>(v);
    v &= (uint64_t{1} << bits) - 1;
    if (is_signed && (v >> (bits - 1))) v |= ~uint64_t{0} << bits;
    return static_cast<int64_t>(v);
}

// The shifts as ops/elementwise.cpp defines them: an amount outside [0, bits) shifts every bit out
// (left: 0; right: the sign everywhere).
int64_t shift(bool left, int64_t a, int64_t n, int bits, bool is_signed) {
    if (n < 0 || n >= bits) return left || !is_signed || a >= 0 ? 0 : -1;
    if (left) return wrap_bits(static_cast<uint64_t>(a) << n, bits, is_signed);
    if (is_signed) return a >> n;  // arithmetic (C++20)
    return static_cast<int64_t>(static_cast<uint64_t>(a) >> n);
}

struct IntType {
    const char* name;
    int bits;
    bool is_signed;
};

// and/or/xor on each integer type and bool, broadcast [3, 5, 7] against [5, 1]; not of each.
std::vector<OpCase> bitwise_logic_cases() {
    std::vector<OpCase> cases;
    Shape xs{3, 5, 7}, ys{5, 1};
    const IntType types[] = {
        {"int8", 8, true}, {"uint8", 8, false}, {"int32", 32, true}, {"int64", 64, true}};
    uint32_t seed = 300;
    for (const IntType& t : types) {
        int64_t lo = t.is_signed ? -(int64_t{1} << (std::min(t.bits, 53) - 1)) : 0;
        int64_t hi = t.is_signed ? -lo - 1 : (int64_t{1} << t.bits) - 1;
        NDArray x = rand_int(xs, seed++, lo, hi, t.name), y = rand_int(ys, seed++, lo, hi, t.name);
        std::vector<double> xv = values_of(x), yv = values_of(y);
        for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
            std::vector<double> want;
            for_each_index(xs, [&](const Shape& i) {
                auto a = static_cast<uint64_t>(static_cast<int64_t>(xv[broadcast_offset(i, xs)]));
                auto b = static_cast<uint64_t>(static_cast<int64_t>(yv[broadcast_offset(i, ys)]));
                uint64_t r = std::string(op) == "bitwise_and"  ? a & b
                             : std::string(op) == "bitwise_or" ? a | b
                                                               : a ^ b;
                want.push_back(double(wrap_bits(r, t.bits, t.is_signed)));
            });
            cases.push_back({std::string(op) + " " + t.name + " broadcast",
                             "def @main(%x: " + tensor_type(xs, t.name) +
                                 ", %y: " + tensor_type(ys, t.name) + ") { " + op + "(%x, %y) }",
                             {x, y},
                             tensor_want(xs, want, 0, t.name)});
        }
        std::vector<double> want;
        for (double v : xv) {
            uint64_t flipped = ~static_cast<uint64_t>(static_cast<int64_t>(v));
            want.push_back(double(wrap_bits(flipped, t.bits, t.is_signed)));
        }
        cases.push_back({std::string("bitwise_not ") + t.name,
                         "def @main(%x: " + tensor_type(xs, t.name) + ") { bitwise_not(%x) }",
                         {x},
                         tensor_want(xs, want, 0, t.name)});
    }
    // bool: the logical ops.
    NDArray x = rand_int(xs, seed++, 0, 1, "bool"), y = rand_int(ys, seed++, 0, 1, "bool");
    std::vector<double> xv = values_of(x), yv = values_of(y), want_not;
    for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
        std::vector<double> want;
        for_each_index(xs, [&](const Shape& i) {
            bool a = xv[broadcast_offset(i, xs)] != 0, b = yv[broadcast_offset(i, ys)] != 0;
            want.push_back(std::string(op) == "bitwise_and"  ? a && b
                           : std::string(op) == "bitwise_or" ? a || b
                                                             : a != b);
        });
        cases.push_back({std::string(op) + " bool broadcast",
                         "def @main(%x: " + tensor_type(xs, "bool") +
                             ", %y: " + tensor_type(ys, "bool") + ") { " + op + "(%x, %y) }",
                         {x, y},
                         tensor_want(xs, want, 0, "bool")});
    }
    for (double v : xv) want_not.push_back(v == 0);
    cases.push_back({"bitwise_not bool",
                     "def @main(%x: " + tensor_type(xs, "bool") + ") { bitwise_not(%x) }",
                     {x},
                     tensor_want(xs, want_not, 0, "bool")});
    return cases;
}

// left_shift and right_shift of values of both signs by every amount from -2 to bits + 2,
// broadcast: values [k, 1] against amounts [n].
std::vector<OpCase> shift_cases() {
    std::vector<OpCase> cases;
    const IntType types[] = {
        {"int8", 8, true}, {"uint8", 8, false}, {"int32", 32, true}, {"int64", 64, true}};
    for (const IntType& t : types) {
        std::vector<double> values = t.is_signed ? std::vector<double>{1, -1, 5, -6, 37, -128}
                                                 : std::vector<double>{1, 255, 5, 128, 37, 200};
        if (t.bits > 8) values.push_back(-std::ldexp(1.0, t.bits - 1));  // INT_MIN
        std::vector<double> amounts;
        for (int n = t.is_signed ? -2 : 0; n <= t.bits + 2; ++n) amounts.push_back(n);
        Shape vs{int64_t(values.size()), 1}, ns{int64_t(amounts.size())};
        for (bool left : {true, false}) {
            std::vector<double> want;
            for (double v : values) {
                for (double n : amounts) {
                    want.push_back(
                        double(shift(left, int64_t(v), int64_t(n), t.bits, t.is_signed)));
                }
            }
            const char* op = left ? "left_shift" : "right_shift";
            cases.push_back({std::string(op) + " " + t.name + " by -2 to bits + 2",
                             "def @main(%x: " + tensor_type(vs, t.name) +
                                 ", %n: " + tensor_type(ns, t.name) + ") { " + op + "(%x, %n) }",
                             {array_of(vs, values, t.name), array_of(ns, amounts, t.name)},
                             tensor_want({vs[0], ns[0]}, want, 0, t.name)});
        }
    }
    return cases;
}

// Logical ops on bool tensors, broadcast.
OpCase logical_case(const std::string& op, uint32_t seed) {
    Shape xs{3, 5, 7}, ys{5, 1};
    NDArray x = rand_int(xs, seed, 0, 1, "bool");
    NDArray y = rand_int(ys, seed + 1, 0, 1, "bool");
    std::vector<double> xv = values_of(x), yv = values_of(y), want;
    std::string text;
    if (op == "logical_not") {
        for (double v : xv) want.push_back(v ? 0 : 1);
        return {op,
                "def @main(%x: " + tensor_type(xs, "bool") + ") { logical_not(%x) }",
                {x},
                tensor_want(xs, want, 0, "bool")};
    }
    for_each_index(xs, [&](const Shape& i) {
        bool a = xv[broadcast_offset(i, xs)], b = yv[broadcast_offset(i, ys)];
        want.push_back(op == "logical_and" ? (a && b) : (a || b));
    });
    text = "def @main(%x: " + tensor_type(xs, "bool") + ", %y: " + tensor_type(ys, "bool") +
           ") { " + op + "(%x, %y) }";
    return {op, text, {x, y}, tensor_want(xs, want, 0, "bool")};
}

// where(cond, x, y) with a three-way broadcast.
OpCase where_case() {
    Shape cs{5, 1}, xs{3, 1, 7}, ys{7};
    NDArray c = rand_int(cs, 7, 0, 1, "bool"), x = rand_f32(xs, 8), y = rand_f32(ys, 9);
    Shape out{3, 5, 7};
    std::vector<double> cv = values_of(c), xv = values_of(x), yv = values_of(y), want;
    for_each_index(out, [&](const Shape& i) {
        want.push_back(cv[broadcast_offset(i, cs)] ? xv[broadcast_offset(i, xs)]
                                                   : yv[broadcast_offset(i, ys)]);
    });
    std::string text = "def @main(%c: " + tensor_type(cs, "bool") + ", %x: " + tensor_type(xs) +
                       ", %y: " + tensor_type(ys) + ") { where(%c, %x, %y) }";
    return {"where 3-way broadcast", text, {c, x, y}, tensor_want(out, want, 0)};
}

// cast float32 -> int32 (truncation toward zero) and int64 -> float32.
std::vector<OpCase> cast_cases() {
    Shape s{3, 5, 7};
    NDArray x = rand_f32(s, 21, -6, 6);
    std::vector<double> want;
    for (double v : values_of(x)) want.push_back(std::trunc(v));
    OpCase to_int{"cast float32->int32",
                  "def @main(%x: " + tensor_type(s) + ") { cast(%x, dtype=\"int32\") }",
                  {x},
                  tensor_want(s, want, 0, "int32")};
    NDArray i = rand_int({11}, 22, -1000, 1000);
    OpCase to_float{
        "cast int64->float32",
        "def @main(%x: " + tensor_type({11}, "int64") + ") { cast(%x, dtype=\"float32\") }",
        {i},
        tensor_want({11}, values_of(i), 0)};
    return {to_int, to_float};
}

// nn.prelu: a slope per channel (axis 1) of an NCHW tensor.
OpCase prelu_case() {
    Shape s{2, 3, 5, 7};
    NDArray x = rand_f32(s, 31), a = rand_f32({3}, 32, 0, 0.5);
    std::vector<double> xv = values_of(x), av = values_of(a), want;
    for_each_index(s, [&](const Shape& i) {
        double v = xv[want.size()];
        want.push_back(v < 0 ? av[i[1]] * v : v);
    });
    return {"nn.prelu 2x3x5x7",
            "def @main(%x: " + tensor_type(s) + ", %a: " + tensor_type({3}) +
                ") { nn.prelu(%x, %a, axis=1) }",
            {x, a},
            tensor_want(s, want)};
}

}  // namespace

std::vector<OpCase> elementwise_cases() {
    std::vector<OpCase> cases;
    uint32_t seed = 1;
    for (const Unary& u : unary_ops()) cases.push_back(unary_case(u, seed++));
    std::vector<Binary> binary = binary_ops();
    for (size_t k = 0; k < binary.size(); ++k) cases.push_back(binary_case(binary[k], k));
    for (const char* op : {"logical_not", "logical_and", "logical_or"}) {
        cases.push_back(logical_case(op, seed++));
    }
    cases.push_back(where_case());
    for (OpCase& c : cast_cases()) cases.push_back(std::move(c));
    cases.push_back(prelu_case());
    for (OpCase& c : bitwise_logic_cases()) cases.push_back(std::move(c));
    for (OpCase& c : shift_cases()) cases.push_back(std::move(c));
    return cases;
}

namespace {

TEST(EveryOp, ElementwiseAndActivations) {
    run_cases(elementwise_cases());
}

TEST(EveryOp, IntegerDivisionNeverTraps) {
    run_cases(integer_division_cases());
}

}  // namespace
}  // namespace anvil::every_op
