#include "runtime/ndarray.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "anvil/runtime.h"

namespace anvil::runtime {
namespace {

bool is_aligned(const void* ptr) {
    return reinterpret_cast<uintptr_t>(ptr) % ANVIL_TENSOR_ALIGNMENT == 0;
}

TEST(DlDtype, RoundTripsEverySpelling) {
    for (const char* text :
         {"float32", "float16", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool", "handle", "float32x4", "int8x16", "boolx8"}) {
        EXPECT_EQ(dl_dtype_to_string(dl_dtype_from_string(text)), text);
    }
    DLDataType f32 = dl_dtype_from_string("float32");
    EXPECT_EQ(f32.code, kDLFloat);
    EXPECT_EQ(f32.bits, 32);
    EXPECT_EQ(f32.lanes, 1);
    DLDataType b = dl_dtype_from_string("bool");
    EXPECT_EQ(b.code, kDLUInt);
    EXPECT_EQ(b.bits, 1);
    EXPECT_EQ(dl_dtype_bytes(b), 1);
    EXPECT_EQ(dl_dtype_bytes(dl_dtype_from_string("float32x4")), 16);
    EXPECT_EQ(dl_dtype_to_string(DLDataType{kDLComplex, 64, 1}), "dtype(code=5, bits=64, lanes=1)");
    EXPECT_EQ(dl_dtype_to_string(DLDataType{6, 8, 1}), "bool");
    EXPECT_EQ(dl_dtype_to_string(DLDataType{5, 1, 4}), "boolx4");
}

TEST(DlDtype, RejectsUnknownSpellings) {
    for (const char* text : {"floot32", "float8", "int7", "", "float32x0", "float32x", "int"}) {
        EXPECT_THROW(dl_dtype_from_string(text), UserError) << text;
    }
    try {
        dl_dtype_from_string("floot32");
        FAIL();
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown data type 'floot32'"), std::string::npos);
    }
}

TEST(NDArray, DataIsAlignedAndShapeIsOwned) {
    std::vector<int64_t> shape = {3, 5, 7};
    for (const char* dtype : {"float32", "int8", "float64", "bool"}) {
        NDArray a = NDArray::empty(shape, dl_dtype_from_string(dtype));
        EXPECT_TRUE(is_aligned(a.raw_data())) << dtype;
        EXPECT_EQ(a.ndim(), 3);
        EXPECT_EQ(a.num_elements(), 105);
        EXPECT_EQ(a.nbytes(), 105u * dl_dtype_bytes(a.dtype()));
        EXPECT_EQ(a.tensor()->strides, nullptr);
        EXPECT_EQ(a.tensor()->byte_offset, 0u);
        EXPECT_EQ(a.device().device_type, kDLCPU);
    }
    NDArray a = NDArray::empty(shape, dl_dtype_from_string("float32"));
    shape[0] = 100;  // the tensor keeps its own copy
    EXPECT_EQ(a.shape()[0], 3);
    EXPECT_NE(a.tensor()->shape, shape.data());
}

TEST(NDArray, ScalarAndEmptyTensorsHaveData) {
    NDArray scalar = NDArray::empty({}, dl_dtype_from_string("float32"));
    EXPECT_EQ(scalar.num_elements(), 1);
    EXPECT_EQ(scalar.nbytes(), 4u);
    EXPECT_TRUE(is_aligned(scalar.raw_data()));
    NDArray empty = NDArray::empty({0, 4}, dl_dtype_from_string("float32"));
    EXPECT_EQ(empty.num_elements(), 0);
    EXPECT_NE(empty.raw_data(), nullptr);
}

TEST(NDArray, CopiesInAndOut) {
    NDArray a = NDArray::empty({2, 3}, dl_dtype_from_string("float32"));
    std::vector<float> values = {1, 2, 3, 4, 5, 6};
    a.copy_from(values);
    EXPECT_EQ(a.data<float>()[4], 5.0f);
    EXPECT_EQ(a.to_vector<float>(), values);
    NDArray b = a;  // a handle copy shares the data
    b.data<float>()[0] = 42;
    EXPECT_EQ(a.data<float>()[0], 42.0f);
    EXPECT_TRUE(a.same_as(b));
}

TEST(NDArray, ReportsMisuse) {
    NDArray a = NDArray::empty({2, 3}, dl_dtype_from_string("float32"));
    try {
        a.copy_from(std::vector<float>{1, 2});
        FAIL();
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("float32[2, 3]"), std::string::npos) << e.what();
    }
    EXPECT_THROW(a.data<double>(), UserError);
    EXPECT_THROW(NDArray::empty({2, -1}, dl_dtype_from_string("float32")), UserError);
    EXPECT_THROW(NDArray::empty({2}, dl_dtype_from_string("float32"), DLDevice{kDLCUDA, 0}),
                 UserError);
    EXPECT_THROW(NDArray::empty({INT64_MAX, 4}, dl_dtype_from_string("float32")), UserError);
}

TEST(TensorCApi, AllocAndFree) {
    int64_t shape[] = {4, 16};
    DLTensor* t = nullptr;
    ASSERT_EQ(anvil_tensor_alloc(shape, 2, dl_dtype_from_string("int32"), {kDLCPU, 0}, &t), 0);
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(is_aligned(t->data));
    EXPECT_EQ(t->ndim, 2);
    EXPECT_NE(t->shape, shape);
    EXPECT_EQ(t->shape[1], 16);
    static_cast<int32_t*>(t->data)[63] = 7;  // the whole extent is writable
    EXPECT_EQ(anvil_tensor_free(t), 0);
    EXPECT_EQ(anvil_tensor_free(nullptr), 0);
}

TEST(TensorCApi, FailuresSetLastError) {
    int64_t shape[] = {4, -2};
    DLTensor* t = nullptr;
    EXPECT_EQ(anvil_tensor_alloc(shape, 2, dl_dtype_from_string("int32"), {kDLCPU, 0}, &t), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("dimension 1 of shape [4, -2]"),
              std::string::npos)
        << anvil_get_last_error();
    EXPECT_EQ(anvil_tensor_alloc(shape, 2, dl_dtype_from_string("int32"), {kDLCPU, 0}, nullptr),
              -1);
    DLTensor foreign{};
    int64_t storage[16] = {};
    DLTensor* inside = reinterpret_cast<DLTensor*>(storage + 4);
    *inside = foreign;
    EXPECT_EQ(anvil_tensor_free(inside), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("not allocated by anvil_tensor_alloc"),
              std::string::npos);
}

TEST(TensorCApi, AdoptTakesOwnership) {
    int64_t shape[] = {8};
    DLTensor* t = nullptr;
    ASSERT_EQ(anvil_tensor_alloc(shape, 1, dl_dtype_from_string("uint8"), {kDLCPU, 0}, &t), 0);
    NDArray a = NDArray::adopt(t);
    EXPECT_EQ(a.tensor(), t);
    EXPECT_EQ(a.str(), "uint8[8]");
}

TEST(Workspace, AlignedAndFreeable) {
    for (int64_t size : {0, 1, 63, 64, 65, 4096, 1 << 20}) {
        void* p = anvil_workspace_alloc(size);
        ASSERT_NE(p, nullptr) << size;
        EXPECT_TRUE(is_aligned(p)) << size;
        anvil_workspace_free(p);
    }
    anvil_workspace_free(nullptr);
    EXPECT_EQ(anvil_workspace_alloc(-5), nullptr);
    EXPECT_NE(std::string(anvil_get_last_error()).find("invalid size -5"), std::string::npos);
}

TEST(LastError, IsPerThread) {
    anvil_set_last_error("main thread message");
    std::string other;
    std::thread t([&] {
        anvil_set_last_error("worker message");
        other = anvil_get_last_error();
    });
    t.join();
    EXPECT_EQ(other, "worker message");
    EXPECT_STREQ(anvil_get_last_error(), "main thread message");
    anvil_set_last_error(nullptr);
    EXPECT_STREQ(anvil_get_last_error(), "");
}

}  // namespace
}  // namespace anvil::runtime
