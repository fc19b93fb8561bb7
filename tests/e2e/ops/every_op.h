// The every-op harness (ggml's test-backend-ops idea): each op of src/ops/ops.def has at least
// one case here — a module in graph text that calls it, inputs at odd shapes (primes, sizes that
// are not multiples of a vector width, size-1 broadcasts) drawn from a fixed seed, and the
// result computed independently by a reference loop written in the test. A case is compiled the
// way a model is (driver::compile_model: the graph passes, fusion, the op's schedule, LLVM) and
// run on the VM, which runs every kind of op (kernels, shape functions, control flow, sequences
// and strings). every_op_test.cpp checks that the cases of all families together call every op
// of ops.def, reading the table itself, so an op cannot be added without a case.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "op_runner.h"
#include "runtime/ndarray.h"
#include "runtime/vm.h"

namespace anvil::every_op {

using runtime::NDArray;
using runtime::VMValue;
using Shape = std::vector<int64_t>;
// Shared with the other op tests (op_runner.h): element counts, shapes, row-major index walks.
using op_testing::for_each_index;
using op_testing::num_elements;
using op_testing::shape_of;

// What a case expects: a tensor (values as doubles, or strings for a string tensor), a tuple
// (a sequence, or several results) or none (an empty optional).
struct Want {
    VMValue::Kind kind = VMValue::Kind::tensor;
    Shape shape;
    std::string dtype = "float32";
    std::vector<double> values;
    std::vector<std::string> strings;
    std::vector<Want> fields;
    // Largest allowed |got - want| / max(1, |want|); 0 means exact (integer, bool, string
    // results and data movement).
    double tol = 1e-5;
};

struct OpCase {
    std::string name;  // for failure messages: op and shape
    std::string text;  // the module: def @main(...) { ... }, perhaps other functions and kernels
    std::vector<VMValue> inputs;
    Want want;
};

// ---- inputs --------------------------------------------------------------------------------

NDArray make_array(const Shape& shape, const std::string& dtype);

// Uniform float32 values in [lo, hi) from `seed`.
NDArray rand_f32(const Shape& shape, uint32_t seed, double lo = -1.0, double hi = 1.0);
// Uniform integers in [lo, hi] of an integer dtype (int64, int32, uint8, int8, bool).
NDArray rand_int(const Shape& shape, uint32_t seed, int64_t lo, int64_t hi,
                 const std::string& dtype = "int64");
// A tensor of the given values, converted to `dtype`.
NDArray array_of(const Shape& shape, const std::vector<double>& values,
                 const std::string& dtype = "float32");
// Every element as a double (float32, float16 not included, integer and bool dtypes).
std::vector<double> values_of(const NDArray& a);

// ---- references ------------------------------------------------------------------------------

// Row-major strides of `shape`.
Shape strides_of(const Shape& shape);
// Offset of `index` (of a broadcast result of rank >= shape's) into a tensor of `shape` that
// numpy-broadcasts to it.
int64_t broadcast_offset(const Shape& index, const Shape& shape);
// numpy's broadcast shape of two shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b);

inline Want tensor_want(Shape shape, std::vector<double> values, double tol = 1e-5,
                        std::string dtype = "float32") {
    Want w;
    w.shape = std::move(shape);
    w.values = std::move(values);
    w.tol = tol;
    w.dtype = std::move(dtype);
    return w;
}
inline Want tuple_want(std::vector<Want> fields) {
    Want w;
    w.kind = VMValue::Kind::tuple;
    w.fields = std::move(fields);
    return w;
}

// The module text's parameter list entry: %name: Tensor[(d0, d1), dtype].
std::string tensor_type(const Shape& shape, const std::string& dtype = "float32");
// An attribute's integer list as module text writes it: [1, 2, 3].
std::string int_list(const std::vector<int64_t>& values);

// ---- running ---------------------------------------------------------------------------------

// Compiles and runs every case, each failure naming its case; a case that throws fails alone.
void run_cases(const std::vector<OpCase>& cases);
// The ops a case's module calls (every graph function of it), from its parsed text.
std::set<std::string> ops_called(const OpCase& c);

// The cases of each family (every_op_<family>_test.cpp).
std::vector<OpCase> elementwise_cases();
std::vector<OpCase> reduce_cases();
std::vector<OpCase> transform_cases();
std::vector<OpCase> nn_cases();
std::vector<OpCase> executor_cases();
std::vector<OpCase> qnn_cases();

}  // namespace anvil::every_op
