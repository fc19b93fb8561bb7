// Test support for op families: run one op through its own rules (type rule → TE compute on
// placeholders → the op's schedule for the host → build → run), plus helpers for naive
// references (row-major index walks) and error-message checks.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../run_kernel.h"
#include "codegen/target.h"
#include "errors/expect_message.h"
#include "graph/expr.h"
#include "graph/type.h"
#include "ops/op_table.h"
#include "ops/tensor_shape.h"
#include "support/error.h"

namespace anvil::op_testing {

using testing::build_and_run;
using testing::random_tensor;
using testing::zeros;
using Shape = std::vector<int64_t>;

inline runtime::NDArray tensor_of(const Shape& shape, const std::string& dtype) {
    return runtime::NDArray::empty(shape, runtime::dl_dtype_from_string(dtype));
}

// Float tensor with values from `f(flat index)`.
inline runtime::NDArray iota_tensor(const Shape& shape, float scale = 1.0f, float offset = 0.0f) {
    auto t = tensor_of(shape, "float32");
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = offset + scale * i;
    return t;
}

template <typename T>
runtime::NDArray tensor_from(const Shape& shape, const std::vector<T>& values,
                             const std::string& dtype) {
    auto t = tensor_of(shape, dtype);
    EXPECT_EQ(static_cast<int64_t>(values.size()), t.num_elements());
    std::memcpy(t.raw_data(), values.data(), values.size() * sizeof(T));
    return t;
}

inline Shape shape_of(const runtime::NDArray& t) {
    return {t.shape().begin(), t.shape().end()};
}

inline int64_t num_elements(const Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

// Row-major offset of `index` in `shape`.
inline int64_t offset_of(const Shape& index, const Shape& shape) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
    return flat;
}

// Calls f(index) for every index of `shape` in row-major order.
inline void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& f) {
    Shape index(shape.size(), 0);
    for (int64_t n = num_elements(shape); n > 0; --n) {
        f(index);
        for (size_t d = shape.size(); d-- > 0;) {
            if (++index[d] < shape[d]) break;
            index[d] = 0;
        }
    }
}

struct OpResult {
    graph::Type type;
    std::vector<runtime::NDArray> outputs;
};

// The op's output type for inputs shaped like `inputs`.
inline graph::Type infer_op_type(const std::string& name,
                                 const std::vector<runtime::NDArray>& inputs,
                                 Ref<graph::Attrs> attrs) {
    const graph::Op& op = ops::get_op(name);
    if (!attrs) attrs = op.make_default_attrs();
    std::vector<graph::Type> arg_types;
    for (const auto& in : inputs) {
        arg_types.push_back(graph::make_tensor_type(shape_of(in), graph::dtype_of(in.dtype())));
    }
    SourceLoc loc{.node_name = "node_0", .op_type = name, .opset = 13};
    return op.infer_type(op, arg_types, *attrs, loc);
}

// Runs op `name` on `inputs`; one output per tensor of the result type.
inline OpResult run_op(const std::string& name, const std::vector<runtime::NDArray>& inputs,
                       Ref<graph::Attrs> attrs = nullptr) {
    const graph::Op& op = ops::get_op(name);
    if (!attrs) attrs = op.make_default_attrs();
    OpResult r;
    r.type = infer_op_type(name, inputs, attrs);
    std::vector<te::Tensor> tensors;
    for (size_t k = 0; k < inputs.size(); ++k) {
        auto t = graph::make_tensor_type(shape_of(inputs[k]), graph::dtype_of(inputs[k].dtype()));
        tensors.push_back(te::placeholder(ops::te_shape(t), graph::dtype_of(inputs[k].dtype()),
                                          "in" + std::to_string(k)));
    }
    std::vector<te::Tensor> outs = op.compute(tensors, *attrs, r.type);
    te::Schedule s = te::create_schedule(outs);
    op.schedule(s, outs[0], outs, te::ScheduleContext{make_lower_context(Target::host())});
    std::vector<graph::Type> out_types;
    if (auto* tuple = r.type.as<graph::TupleType>()) {
        out_types = tuple->fields;
    } else {
        out_types = {r.type};
    }
    EXPECT_EQ(out_types.size(), outs.size());
    std::vector<runtime::NDArray> args = inputs;
    for (const auto& t : out_types) {
        const auto* tt = t.as<graph::TensorType>();
        auto out = runtime::NDArray::empty(tt->static_shape(), graph::dl_dtype_of(tt->dtype));
        std::memset(out.raw_data(), 0, out.nbytes());
        r.outputs.push_back(out);
        args.push_back(out);
    }
    tensors.insert(tensors.end(), outs.begin(), outs.end());
    build_and_run(s, tensors, args);
    return r;
}

template <typename A>
Ref<A> make_attrs(const std::function<void(A&)>& set) {
    auto* a = new A();
    set(*a);
    return Ref<A>(a);
}

// The UserError message of a call, or a test failure (errors/expect_message.h).
using ::anvil::errors_test::user_error_of;

#define EXPECT_MESSAGE_HAS(message, ...)                       \
    do {                                                       \
        std::string m_ = (message);                            \
        for (const char* part : {__VA_ARGS__}) {               \
            EXPECT_NE(m_.find(part), std::string::npos)        \
                << "message: " << m_ << "\nmissing: " << part; \
        }                                                      \
    } while (0)

// Elementwise comparison with |a - b| <= atol + rtol * |b|.
inline void expect_close(const runtime::NDArray& actual, const std::vector<float>& expected,
                         float rtol = 1e-5f, float atol = 1e-6f, const std::string& what = "") {
    ASSERT_EQ(actual.num_elements(), static_cast<int64_t>(expected.size())) << what;
    const float* a = actual.data<float>();
    for (size_t i = 0; i < expected.size(); ++i) {
        ASSERT_LE(std::abs(a[i] - expected[i]), atol + rtol * std::abs(expected[i]))
            << what << " element " << i << ": got " << a[i] << ", expected " << expected[i];
    }
}

}  // namespace anvil::op_testing
