// The packed entry's argument checks and their messages.
#include <gtest/gtest.h>

#include "codegen_test_util.h"

namespace anvil {
namespace {

using namespace codegen_test;

const DataType f32 = DataType::float32();

// matmul(A[4, k], B[k, 6], C[4, 6], alpha): a body that does not matter here.
runtime::PackedFunc matmul() {
    static runtime::PackedFunc fn = [] {
        auto k = make_var("k");
        auto A = make_buffer("A", f32, {i32(4), k});
        auto B = make_buffer("B", f32, {k, i32(6)});
        auto C = make_buffer("C", f32, {i32(4), i32(6)});
        auto alpha = make_var("alpha", f32);
        auto i = make_var("i");
        tir::Stmt body =
            tir::make_for(i, i32(0), i32(24), tir::ForKind::Serial, tir::make_store(C, alpha, {i}));
        return jit(tir::make_prim_func("matmul", {A, B, C}, body, {alpha}));
    }();
    return fn;
}

TEST(Wrapper, AcceptsGoodArguments) {
    runtime::NDArray A = make_empty(f32, {4, 5}), B = make_empty(f32, {5, 6});
    runtime::NDArray C = make_empty(f32, {4, 6});
    matmul()(A, B, C, 2.5);
    EXPECT_EQ(C.to_vector<float>(), std::vector<float>(24, 2.5f));
}

TEST(Wrapper, WrongArgumentCount) {
    runtime::NDArray A = make_empty(f32, {4, 5}), B = make_empty(f32, {5, 6});
    std::string e = error_of([&] { matmul()(A, B); });
    EXPECT_NE(e.find("matmul: expected 4 arguments (A, B, C, alpha), got 2"), std::string::npos)
        << e;
}

TEST(Wrapper, WrongTypeCodes) {
    runtime::NDArray A = make_empty(f32, {4, 5}), B = make_empty(f32, {5, 6});
    runtime::NDArray C = make_empty(f32, {4, 6});
    std::string e = error_of([&] { matmul()(A, 3, C, 1.0); });
    EXPECT_NE(e.find("matmul: argument 1 'B' must be a tensor (type code 7), got type code 0"),
              std::string::npos)
        << e;
    e = error_of([&] { matmul()(A, B, C, "x"); });
    EXPECT_NE(e.find("matmul: argument 3 'alpha' must be a float"), std::string::npos) << e;
}

TEST(Wrapper, WrongDtype) {
    runtime::NDArray A = make_empty(f32, {4, 5}), B = make_empty(DataType::float64(), {5, 6});
    runtime::NDArray C = make_empty(f32, {4, 6});
    std::string e = error_of([&] { matmul()(A, B, C, 1.0); });
    EXPECT_NE(e.find("matmul: argument 1 'B' has dtype (code 2, bits 64, lanes 1), expected "
                     "float32 (code 2, bits 32, lanes 1)"),
              std::string::npos)
        << e;
}

TEST(Wrapper, WrongNdim) {
    runtime::NDArray A = make_empty(f32, {20}), B = make_empty(f32, {5, 6});
    runtime::NDArray C = make_empty(f32, {4, 6});
    std::string e = error_of([&] { matmul()(A, B, C, 1.0); });
    EXPECT_NE(e.find("matmul: argument 0 'A' has 1 dimensions, expected 2 (shape [4, k])"),
              std::string::npos)
        << e;
}

TEST(Wrapper, WrongShapes) {
    runtime::NDArray A = make_empty(f32, {4, 5}), B = make_empty(f32, {5, 6});
    runtime::NDArray C = make_empty(f32, {4, 6});
    runtime::NDArray C_bad = make_empty(f32, {4, 7});
    std::string e = error_of([&] { matmul()(A, B, C_bad, 1.0); });
    EXPECT_NE(e.find("matmul: argument 2 'C' has shape [4, 7], expected [4, 6]"), std::string::npos)
        << e;
    // k is bound from A; B disagrees.
    runtime::NDArray B_bad = make_empty(f32, {4, 6});
    e = error_of([&] { matmul()(A, B_bad, C, 1.0); });
    EXPECT_NE(e.find("matmul: argument 1 'B' has shape [4, 6], expected [k, 6] with k = 5"),
              std::string::npos)
        << e;
    runtime::NDArray A_bad = make_empty(f32, {3, 5});
    e = error_of([&] { matmul()(A_bad, B, C, 1.0); });
    EXPECT_NE(e.find("matmul: argument 0 'A' has shape [3, 5], expected [4, k] with k = 5"),
              std::string::npos)
        << e;
}

// A dimension variable is a size: the loops are compiled assuming it is not negative.
TEST(Wrapper, NegativeSymbolicDimension) {
    runtime::NDArray A = make_empty(f32, {4, 5}), B = make_empty(f32, {5, 6});
    runtime::NDArray C = make_empty(f32, {4, 6});
    DLTensor a = *A.tensor(), b = *B.tensor();
    int64_t a_shape[2] = {4, -5}, b_shape[2] = {-5, 6};
    a.shape = a_shape;
    b.shape = b_shape;
    std::string e = error_of([&] { matmul()(&a, &b, C, 1.0); });
    EXPECT_NE(e.find("matmul: argument 0 'A' has shape [4, -5], expected [4, k] with k = -5"),
              std::string::npos)
        << e;
}

// copy(A[n], B[cast<int32>(n)]) with an int64 n: a size beyond int32 cannot hide behind the
// cast (the loops assume n itself fits the int32 dimensions it makes).
TEST(Wrapper, ADimensionVariableMustFitItsCasts) {
    auto n = make_var("n", DataType::int64());
    auto A = make_buffer("A", f32, {n});
    auto B = make_buffer("B", f32, {make_cast(DataType::int32(), n)});
    auto i = make_var("i");
    tir::Stmt body = tir::make_for(i, i32(0), make_cast(DataType::int32(), n), tir::ForKind::Serial,
                                   tir::make_store(B, 1.0f, {i}));
    runtime::PackedFunc copy = jit(tir::make_prim_func("copy", {A, B}, body));
    runtime::NDArray a = make_empty(f32, {3}), b = make_empty(f32, {3});
    copy(a, b);
    EXPECT_EQ(b.to_vector<float>(), std::vector<float>(3, 1.0f));
    DLTensor huge = *a.tensor();
    int64_t huge_shape[1] = {(int64_t{1} << 32) + 3};
    huge.shape = huge_shape;
    std::string e = error_of([&] { copy(&huge, b); });
    EXPECT_NE(e.find("copy: argument 1 'B' has shape [3], expected [cast<int32>(n)] with n = "
                     "4294967299"),
              std::string::npos)
        << e;
}

TEST(Wrapper, DeviceStridesAlignmentAndNull) {
    runtime::NDArray A = make_empty(f32, {4, 5}), B = make_empty(f32, {5, 6});
    runtime::NDArray C = make_empty(f32, {4, 6});
    DLTensor t = *C.tensor();
    t.device.device_type = kDLCUDA;
    std::string e = error_of([&] { matmul()(A, B, &t, 1.0); });
    EXPECT_NE(e.find("matmul: argument 2 'C' is on device type 2, expected the CPU (1)"),
              std::string::npos)
        << e;

    t = *C.tensor();
    int64_t compact[2] = {6, 1}, transposed[2] = {1, 4};
    t.strides = compact;
    matmul()(A, B, &t, 1.0);  // explicit but compact strides are fine
    t.strides = transposed;
    e = error_of([&] { matmul()(A, B, &t, 1.0); });
    EXPECT_NE(e.find("matmul: argument 2 'C' is not a compact row-major tensor"), std::string::npos)
        << e;

    t = *C.tensor();
    t.byte_offset = 4;  // a view starting one element in: no longer 64-byte aligned
    e = error_of([&] { matmul()(A, B, &t, 1.0); });
    EXPECT_NE(e.find("matmul: argument 2 'C' has data at"), std::string::npos) << e;
    EXPECT_NE(e.find("not 64-byte aligned"), std::string::npos) << e;

    AnvilValue args[4];
    int codes[4] = {kAnvilDLTensor, kAnvilDLTensor, kAnvilDLTensor, kAnvilFloat};
    args[0].v_handle = A.tensor();
    args[1].v_handle = nullptr;
    args[2].v_handle = C.tensor();
    args[3].v_float64 = 1.0;
    e = error_of([&] { matmul().call(args, codes, 4); });
    EXPECT_NE(e.find("matmul: argument 1 'B' is a null tensor"), std::string::npos) << e;
}

TEST(Wrapper, BoolTensorsUseOneBytePerElement) {
    auto A = make_buffer("A", DataType::bool_(), {i32(8)});
    auto C = make_buffer("C", DataType::int32(), {i32(8)});
    auto i = make_var("i");
    auto fn = jit(tir::make_prim_func(
        "count", {A, C},
        tir::make_for(i, i32(0), i32(8), tir::ForKind::Serial,
                      tir::make_store(C, select(make_load(A, {i}), i32(10), i32(20)), {i}))));
    runtime::NDArray An = make_array<uint8_t>({1, 0, 1, 1, 0, 0, 1, 0}, DataType::bool_());
    runtime::NDArray Cn = make_empty(DataType::int32(), {8});
    fn(An, Cn);
    EXPECT_EQ(Cn.to_vector<int32_t>(), (std::vector<int32_t>{10, 20, 10, 10, 20, 20, 10, 20}));
}

}  // namespace
}  // namespace anvil
