// Every arithmetic, comparison and logical operator and every cast, on scalar and vector code,
// against C++ reference values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "codegen_test_util.h"

namespace anvil {
namespace {

using namespace codegen_test;

// ---- element access in the type-erased form the references use --------------------------

uint16_t bf16_from_float(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (std::isnan(f)) return 0x7fc0;
    uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);  // to nearest, ties to even
    return static_cast<uint16_t>(rounded >> 16);
}

float bf16_to_float(uint16_t b) {
    uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

template <typename T>
T wrap_int(double v) {
    // Modular conversion (C++20) of an exact integer value.
    return v < 0 ? static_cast<T>(static_cast<int64_t>(v))
                 : static_cast<T>(static_cast<uint64_t>(v));
}

// Stores v (already a value of the type, or converted as a cast would) into one element.
void store_as(DataType t, double v, void* p) {
    switch (t.code()) {
        case DataType::Code::Bool:
            *static_cast<uint8_t*>(p) = v != 0;
            return;
        case DataType::Code::BFloat:
            *static_cast<uint16_t*>(p) = bf16_from_float(static_cast<float>(v));
            return;
        case DataType::Code::Float:
            if (t.bits() == 16) *static_cast<_Float16*>(p) = static_cast<_Float16>(v);
            if (t.bits() == 32) *static_cast<float*>(p) = static_cast<float>(v);
            if (t.bits() == 64) *static_cast<double*>(p) = v;
            return;
        default:
            break;
    }
    const bool s = t.is_int();
    switch (t.bits()) {
        case 8:
            s ? *static_cast<int8_t*>(p) = wrap_int<int8_t>(v)
              : *static_cast<uint8_t*>(p) = wrap_int<uint8_t>(v);
            return;
        case 16:
            s ? *static_cast<int16_t*>(p) = wrap_int<int16_t>(v)
              : *static_cast<uint16_t*>(p) = wrap_int<uint16_t>(v);
            return;
        case 32:
            s ? *static_cast<int32_t*>(p) = wrap_int<int32_t>(v)
              : *static_cast<uint32_t*>(p) = wrap_int<uint32_t>(v);
            return;
        default:
            s ? *static_cast<int64_t*>(p) = wrap_int<int64_t>(v)
              : *static_cast<uint64_t*>(p) = wrap_int<uint64_t>(v);
            return;
    }
}

double load_as(DataType t, const void* p) {
    switch (t.code()) {
        case DataType::Code::Bool:
            return *static_cast<const uint8_t*>(p);
        case DataType::Code::BFloat:
            return bf16_to_float(*static_cast<const uint16_t*>(p));
        case DataType::Code::Float:
            if (t.bits() == 16) return static_cast<double>(*static_cast<const _Float16*>(p));
            if (t.bits() == 32) return *static_cast<const float*>(p);
            return *static_cast<const double*>(p);
        default:
            break;
    }
    const bool s = t.is_int();
    switch (t.bits()) {
        case 8:
            return s ? *static_cast<const int8_t*>(p) : *static_cast<const uint8_t*>(p);
        case 16:
            return s ? *static_cast<const int16_t*>(p) : *static_cast<const uint16_t*>(p);
        case 32:
            return s ? static_cast<double>(*static_cast<const int32_t*>(p))
                     : static_cast<double>(*static_cast<const uint32_t*>(p));
        default:
            return s ? static_cast<double>(*static_cast<const int64_t*>(p))
                     : static_cast<double>(*static_cast<const uint64_t*>(p));
    }
}

// Values of type t as stored (so inputs that do not fit, like 1e-3 in bfloat16, are rounded).
std::vector<double> typed(DataType t, const std::vector<double>& values) {
    std::vector<double> out;
    alignas(8) unsigned char buf[8];
    for (double v : values) {
        store_as(t, v, buf);
        out.push_back(load_as(t, buf));
    }
    return out;
}

runtime::NDArray array_of(DataType t, const std::vector<double>& values) {
    runtime::NDArray a = make_empty(t, {static_cast<int64_t>(values.size())});
    const int64_t bytes = t.is_bool() ? 1 : t.bytes();
    for (size_t i = 0; i < values.size(); ++i) {
        store_as(t, values[i], static_cast<char*>(a.raw_data()) + i * bytes);
    }
    return a;
}

std::vector<double> values_of(DataType t, const runtime::NDArray& a) {
    std::vector<double> out;
    const int64_t bytes = t.is_bool() ? 1 : t.bytes();
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        out.push_back(load_as(t, static_cast<const char*>(a.raw_data()) + i * bytes));
    }
    return out;
}

// Rounds a float result to the precision of t, as one IEEE operation in t would.
double round_to(DataType t, double v) {
    alignas(8) unsigned char buf[8];
    store_as(t, t.bits() == 64 ? v : static_cast<double>(static_cast<float>(v)), buf);
    return load_as(t, buf);
}

// ---- references ---------------------------------------------------------------------------------

double int_ref(ExprKind k, DataType t, double da, double db) {
    const bool s = t.is_int();
    const int64_t a =
        s ? static_cast<int64_t>(da) : static_cast<int64_t>(static_cast<uint64_t>(da));
    const int64_t b =
        s ? static_cast<int64_t>(db) : static_cast<int64_t>(static_cast<uint64_t>(db));
    const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    uint64_t r = 0;
    switch (k) {
        case ExprKind::Add:
            r = ua + ub;
            break;
        case ExprKind::Sub:
            r = ua - ub;
            break;
        case ExprKind::Mul:
            r = ua * ub;
            break;
        case ExprKind::Div:
            r = s ? static_cast<uint64_t>(a / b) : ua / ub;
            break;
        case ExprKind::Mod:
            r = s ? static_cast<uint64_t>(a % b) : ua % ub;
            break;
        case ExprKind::FloorDiv: {
            if (!s) {
                r = ua / ub;
                break;
            }
            int64_t q = a / b;
            if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
            r = static_cast<uint64_t>(q);
            break;
        }
        case ExprKind::FloorMod: {
            if (!s) {
                r = ua % ub;
                break;
            }
            int64_t m = a % b;
            if (m != 0 && ((m < 0) != (b < 0))) m += b;
            r = static_cast<uint64_t>(m);
            break;
        }
        case ExprKind::Min:
            r = s ? static_cast<uint64_t>(std::min(a, b)) : std::min(ua, ub);
            break;
        case ExprKind::Max:
            r = s ? static_cast<uint64_t>(std::max(a, b)) : std::max(ua, ub);
            break;
        default:
            ADD_FAILURE() << "no reference";
            break;
    }
    // Reduce to the type's width (store/load wraps).
    alignas(8) unsigned char buf[8];
    double as_double = s ? static_cast<double>(static_cast<int64_t>(r)) : static_cast<double>(r);
    if (t.bits() == 64) return as_double;
    store_as(t,
             s ? static_cast<double>(static_cast<int64_t>(r << (64 - t.bits())) >> (64 - t.bits()))
               : static_cast<double>(r & ((uint64_t{1} << t.bits()) - 1)),
             buf);
    return load_as(t, buf);
}

double float_ref(ExprKind k, DataType t, double a, double b) {
    // float16 and bfloat16 compute in float32, float32 in float32, float64 in float64.
    auto op = [&](auto x, auto y) -> double {
        switch (k) {
            case ExprKind::Add:
                return x + y;
            case ExprKind::Sub:
                return x - y;
            case ExprKind::Mul:
                return x * y;
            case ExprKind::Div:
                return x / y;
            case ExprKind::Mod:
                return std::fmod(x, y);
            case ExprKind::FloorDiv:
                return std::floor(x / y);
            case ExprKind::FloorMod: {
                decltype(x) q = std::floor(x / y);
                decltype(x) p = q * y;
                return x - p;
            }
            case ExprKind::Min:
                return std::fmin(x, y);
            case ExprKind::Max:
                return std::fmax(x, y);
            default:
                ADD_FAILURE() << "no reference";
                return 0;
        }
    };
    if (t.bits() == 64) return op(a, b);
    return round_to(t, op(static_cast<float>(a), static_cast<float>(b)));
}

double compare_ref(ExprKind k, double a, double b) {
    switch (k) {
        case ExprKind::EQ:
            return a == b;
        case ExprKind::NE:
            return a != b;
        case ExprKind::LT:
            return a < b;
        case ExprKind::LE:
            return a <= b;
        case ExprKind::GT:
            return a > b;
        case ExprKind::GE:
            return a >= b;
        default:
            return -1;
    }
}

void expect_same(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i]) && std::isnan(got[i])) continue;
        EXPECT_EQ(got[i], want[i]) << what << " at " << i;
    }
}

std::vector<DataType> all_types() {
    return {DataType::int_(8),   DataType::int_(16),   DataType::int32(),   DataType::int64(),
            DataType::uint(8),   DataType::uint(16),   DataType::uint(32),  DataType::uint(64),
            DataType::float16(), DataType::bfloat16(), DataType::float32(), DataType::float64()};
}

std::pair<std::vector<double>, std::vector<double>> operands(DataType t) {
    if (t.is_int()) {
        std::vector<double> a{-128, -100, -7, -1, 0, 1, 3, 7, 100, 127, -50, 64, 5, -3, 2, 9};
        if (t.bits() >= 16) {
            a[0] = t.bits() == 64 ? -9.2233720368547758e18 : -std::ldexp(1.0, t.bits() - 1);
            a[9] = t.bits() == 64 ? 4.0e18 : std::ldexp(1.0, t.bits() - 1) - 1;
        }
        return {a, {3, -7, 2, 5, -3, 4, -2, 7, -5, 1, 6, -4, 3, 11, -9, 2}};
    }
    if (t.is_uint()) {
        std::vector<double> a{0, 1, 2, 3, 7, 100, 127, 128, 200, 255, 50, 64, 5, 13, 250, 255};
        if (t.bits() >= 16) a[15] = t.bits() == 64 ? 1.8e19 : std::ldexp(1.0, t.bits()) - 1;
        return {a, {3, 7, 2, 5, 3, 4, 2, 7, 5, 1, 6, 4, 3, 11, 9, 2}};
    }
    return {
        {-3.5, -2.25, -1, -0.5, 0, 0.5, 1, 1.75, 2.5, 3, 7.25, -7.75, 100.5, -0.125, 1e3, -1e-3},
        {2, -2, 0.5, -0.75, 3, 1.5, -4, 0.25, 1, -1, 8, 3.5, -6, 0.5, 7, 2}};
}

class ArithTest : public ::testing::TestWithParam<int> {};

TEST_P(ArithTest, BinaryOpsEveryType) {
    const int lanes = GetParam();
    const int64_t n = 16;
    for (DataType t : all_types()) {
        std::vector<ExprKind> kinds{ExprKind::Add, ExprKind::Sub, ExprKind::Mul, ExprKind::Div,
                                    ExprKind::Min, ExprKind::Max, ExprKind::EQ,  ExprKind::NE,
                                    ExprKind::LT,  ExprKind::LE,  ExprKind::GT,  ExprKind::GE};
        if (!(t.is_floating() && t.bits() == 16)) {
            kinds.insert(kinds.end(), {ExprKind::Mod, ExprKind::FloorDiv, ExprKind::FloorMod});
        }
        std::vector<Ref<tir::PrimFunc>> funcs;
        for (ExprKind k : kinds) {
            const bool cmp = compare_ref(k, 0, 0) >= 0;
            funcs.push_back(elementwise2(
                std::string(expr_kind_name(k)) + "_op", t, t, cmp ? DataType::bool_() : t, n, lanes,
                [&](PrimExpr a, PrimExpr b) { return make_binary(k, a, b); }));
        }
        runtime::Module m = codegen::build_llvm(funcs, host_target());
        auto [av, bv] = operands(t);
        std::vector<double> a = typed(t, av), b = typed(t, bv);
        for (size_t f = 0; f < kinds.size(); ++f) {
            ExprKind k = kinds[f];
            const bool cmp = compare_ref(k, 0, 0) >= 0;
            DataType out = cmp ? DataType::bool_() : t;
            runtime::NDArray A = array_of(t, a), B = array_of(t, b), C = make_empty(out, {n});
            m.get_function(funcs[f]->name)(A, B, C);
            std::vector<double> want;
            for (int64_t i = 0; i < n; ++i) {
                want.push_back(cmp               ? compare_ref(k, a[i], b[i])
                               : t.is_floating() ? float_ref(k, t, a[i], b[i])
                                                 : int_ref(k, t, a[i], b[i]));
            }
            expect_same(values_of(out, C), want,
                        t.str() + " " + expr_kind_name(k) + " lanes " + std::to_string(lanes));
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Lanes, ArithTest, ::testing::Values(1, 8));

TEST(Arith, FloorDivModNegativeConstants) {
    // The common index form: a constant positive divisor and negative dividends.
    auto f = elementwise2(
        "fdm", DataType::int32(), DataType::int32(), DataType::int32(), 8, 1,
        [](PrimExpr a, PrimExpr) { return floordiv(a, i32(4)) * 100 + floormod(a, i32(4)); });
    runtime::NDArray A = make_array<int32_t>({-9, -8, -5, -4, -1, 0, 3, 9}, DataType::int32());
    runtime::NDArray B = make_empty(DataType::int32(), {8}), C = make_empty(DataType::int32(), {8});
    jit(f)(A, B, C);
    EXPECT_EQ(C.to_vector<int32_t>(),
              (std::vector<int32_t>{-297, -200, -197, -100, -97, 0, 3, 201}));
}

TEST(Arith, LogicAndSelect) {
    for (int lanes : {1, 4}) {
        DataType b = DataType::bool_();
        auto f_and =
            elementwise2("land", b, b, b, 4, lanes, [](PrimExpr x, PrimExpr y) { return x && y; });
        auto f_or =
            elementwise2("lor", b, b, b, 4, lanes, [](PrimExpr x, PrimExpr y) { return x || y; });
        auto f_not =
            elementwise2("lnot", b, b, b, 4, lanes, [](PrimExpr x, PrimExpr) { return !x; });
        auto f_sel = elementwise2(
            "sel", DataType::float32(), DataType::float32(), DataType::float32(), 4, lanes,
            [](PrimExpr x, PrimExpr y) { return select(x < y, y - x, x * 2.0f); });
        runtime::Module m = codegen::build_llvm({f_and, f_or, f_not, f_sel}, host_target());
        runtime::NDArray X = make_array<uint8_t>({0, 0, 1, 1}, b),
                         Y = make_array<uint8_t>({0, 1, 0, 1}, b);
        runtime::NDArray Z = make_empty(b, {4});
        m.get_function("land")(X, Y, Z);
        EXPECT_EQ(Z.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 1}));
        m.get_function("lor")(X, Y, Z);
        EXPECT_EQ(Z.to_vector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 1}));
        m.get_function("lnot")(X, Y, Z);
        EXPECT_EQ(Z.to_vector<uint8_t>(), (std::vector<uint8_t>{1, 1, 0, 0}));
        runtime::NDArray P = make_array<float>({1, 5, 3, -2}, DataType::float32());
        runtime::NDArray Q = make_array<float>({2, 4, 3, 1}, DataType::float32());
        runtime::NDArray R = make_empty(DataType::float32(), {4});
        m.get_function("sel")(P, Q, R);
        EXPECT_EQ(R.to_vector<float>(), (std::vector<float>{1, 10, 6, 3}));
    }
}

// ---- casts ----------------------------------------------------------------------------------

double cast_ref(DataType from, DataType to, double v) {
    if (to.is_bool()) return v != 0;
    if (to.is_integer()) {
        double whole = from.is_floating() ? std::trunc(v) : v;
        alignas(8) unsigned char buf[8];
        store_as(to, whole, buf);  // modular for integers
        return load_as(to, buf);
    }
    if (to.is_bfloat()) return bf16_to_float(bf16_from_float(static_cast<float>(v)));
    alignas(8) unsigned char buf[8];
    store_as(to, v, buf);
    return load_as(to, buf);
}

std::vector<double> cast_inputs(DataType from, DataType to) {
    if (from.is_bool()) return {0, 1, 1, 0, 1, 0, 0, 1};
    if (from.is_uint()) return {0, 1, 2, 3, 100, 127, 200, 255};
    if (from.is_int()) return {0, 1, -1, 2, -3, 100, -100, 127};
    // Floats: out of the range of integers narrower than 32 bits and of uint32 too, which wrap
    // (converted through a wider signed integer, as C does on x86-64); in range of the other
    // integer targets.
    if ((to.is_integer() && to.bits() < 32) || to == DataType::uint(32)) {
        return {0, 1, -1, -8.5, 300.75, -1000.25, 127, 40000};
    }
    if (to.is_uint()) return {0, 1, 0.5, 2.75, 3.5, 100.25, 127, 42};
    return {0, 1, -1, 2.75, -3.5, 100.25, -100.5, 127};
}

TEST(Arith, CastsBetweenAllTypes) {
    std::vector<DataType> types = all_types();
    types.push_back(DataType::bool_());
    for (int lanes : {1, 8}) {
        for (DataType from : types) {
            std::vector<Ref<tir::PrimFunc>> funcs;
            for (DataType to : types) {
                funcs.push_back(elementwise2(
                    "cast_to_" + std::to_string(funcs.size()), from, from, to, 8, lanes,
                    [&](PrimExpr a, PrimExpr) { return cast(to.with_lanes(lanes), a); }));
            }
            runtime::Module m = codegen::build_llvm(funcs, host_target());
            for (size_t k = 0; k < types.size(); ++k) {
                DataType to = types[k];
                std::vector<double> in = typed(from, cast_inputs(from, to));
                runtime::NDArray A = array_of(from, in), C = make_empty(to, {8});
                m.get_function(funcs[k]->name)(A, A, C);
                std::vector<double> want;
                for (double v : in) want.push_back(cast_ref(from, to, v));
                expect_same(
                    values_of(to, C), want,
                    "cast " + from.str() + " -> " + to.str() + " lanes " + std::to_string(lanes));
            }
        }
    }
}

TEST(Arith, HalfPrecisionRoundTrips) {
    // float32 -> float16/bfloat16 -> float32 rounds to nearest even, keeps inf and NaN.
    std::vector<float> in{
        1.0f, 1.00048828125f /* half ulp tie */, 3.14159265f, -65504.0f, 1e-3f, INFINITY, -INFINITY,
        NAN};
    for (DataType half : {DataType::float16(), DataType::bfloat16()}) {
        auto f = elementwise2("rt", DataType::float32(), DataType::float32(), DataType::float32(),
                              8, 8, [&](PrimExpr a, PrimExpr) {
                                  return cast(DataType::float_(32, 8), cast(half.with_lanes(8), a));
                              });
        runtime::NDArray A = make_array(in, DataType::float32()),
                         C = make_empty(DataType::float32(), {8});
        jit(f)(A, A, C);
        std::vector<float> got = C.to_vector<float>();
        for (size_t i = 0; i < in.size(); ++i) {
            float want = half.is_bfloat() ? bf16_to_float(bf16_from_float(in[i]))
                                          : static_cast<float>(static_cast<_Float16>(in[i]));
            if (std::isnan(want)) {
                EXPECT_TRUE(std::isnan(got[i])) << half.str() << " at " << i;
            } else {
                EXPECT_EQ(got[i], want) << half.str() << " at " << i;
            }
        }
    }
}

TEST(Arith, HalfOnBaselineX86) {
    // Without F16C, LLVM converts float16 through compiler-rt/libgcc helpers (__extendhfsf2),
    // which the JIT must find in the process.
    if (host_target().mtriple.rfind("x86_64", 0) != 0) GTEST_SKIP() << "x86-64 only";
    DataType h = DataType::float16();
    auto f = elementwise2("hadd", h, h, h, 8, 8, [](PrimExpr a, PrimExpr b) { return a * b + a; });
    runtime::Module m = codegen::build_llvm({f}, Target::parse("llvm -mcpu=x86-64"));
    std::vector<double> a{1, 2, 3, 0.5, -1, 10, 0.25, 7}, b{2, 0.5, -1, 4, 3, 0.1, 8, 1};
    runtime::NDArray A = array_of(h, a), B = array_of(h, b), C = make_empty(h, {8});
    m.get_function("hadd")(A, B, C);
    std::vector<double> ta = typed(h, a), tb = typed(h, b), got = values_of(h, C);
    for (int i = 0; i < 8; ++i) EXPECT_NEAR(got[i], ta[i] * tb[i] + ta[i], 1e-2) << i;
}

TEST(Arith, ReinterpretAndLikely) {
    auto f = elementwise2(
        "bits", DataType::float32(), DataType::float32(), DataType::int32(), 4, 4,
        [](PrimExpr a, PrimExpr) { return make_call(DataType::int_(32, 4), "reinterpret", {a}); });
    runtime::NDArray A = make_array<float>({1.0f, -2.0f, 0.0f, 0.5f}, DataType::float32());
    runtime::NDArray C = make_empty(DataType::int32(), {4});
    jit(f)(A, A, C);
    EXPECT_EQ(C.to_vector<int32_t>(),
              (std::vector<int32_t>{0x3f800000, static_cast<int32_t>(0xc0000000), 0, 0x3f000000}));
    auto g = elementwise2("lk", DataType::int32(), DataType::int32(), DataType::int32(), 4, 1,
                          [](PrimExpr a, PrimExpr b) {
                              return select(make_call(DataType::bool_(), "likely", {a < b}), a, b);
                          });
    runtime::NDArray X = make_array<int32_t>({1, 5, 3, 0}, DataType::int32());
    runtime::NDArray Y = make_array<int32_t>({2, 4, 3, 1}, DataType::int32());
    jit(g)(X, Y, C);
    EXPECT_EQ(C.to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 3, 0}));
}

}  // namespace
}  // namespace anvil
