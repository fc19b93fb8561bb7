// The every-op harness's machinery (every_op.h): inputs, reference helpers, compiling and running
// a case on the VM and comparing what it gives with what the case wants.
#include "every_op.h"

#include <algorithm>
#include <sstream>

#include "driver/compile.h"
#include "driver/vm_compiler.h"
#include "e2e/vm_test_util.h"
#include "graph/expr_functor.h"
#include "graph/parser.h"
#include "ops/op_table.h"
#include "runtime/string_tensor.h"
#include "support/error.h"

namespace anvil::every_op {

NDArray make_array(const Shape& shape, const std::string& dtype) {
    NDArray a = NDArray::empty(shape, runtime::dl_dtype_from_string(dtype));
    if (a.nbytes()) std::memset(a.raw_data(), 0, a.nbytes());
    return a;
}

namespace {

// Stores `v` at element i of `a` in a's dtype.
void store(const NDArray& a, int64_t i, double v) {
    DLDataType t = a.dtype();
    if (t.code == kDLFloat && t.bits == 32) {
        a.data<float>()[i] = static_cast<float>(v);
    } else if (t.code == kDLFloat && t.bits == 64) {
        a.data<double>()[i] = v;
    } else if (t.code == kDLInt && t.bits == 64) {
        a.data<int64_t>()[i] = static_cast<int64_t>(v);
    } else if (t.code == kDLInt && t.bits == 32) {
        a.data<int32_t>()[i] = static_cast<int32_t>(v);
    } else if (t.code == kDLInt && t.bits == 8) {
        a.data<int8_t>()[i] = static_cast<int8_t>(v);
    } else if (t.code == kDLUInt && (t.bits == 8 || t.bits == 1)) {
        a.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    } else {
        throw std::runtime_error("every_op: no store for dtype " + runtime::dl_dtype_to_string(t));
    }
}

}  // namespace

NDArray rand_f32(const Shape& shape, uint32_t seed, double lo, double hi) {
    NDArray a = make_array(shape, "float32");
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    for (int64_t i = 0; i < a.num_elements(); ++i) a.data<float>()[i] = float(dist(rng));
    return a;
}

NDArray rand_int(const Shape& shape, uint32_t seed, int64_t lo, int64_t hi,
                 const std::string& dtype) {
    NDArray a = make_array(shape, dtype);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    for (int64_t i = 0; i < a.num_elements(); ++i) store(a, i, double(dist(rng)));
    return a;
}

NDArray array_of(const Shape& shape, const std::vector<double>& values, const std::string& dtype) {
    NDArray a = make_array(shape, dtype);
    if (static_cast<int64_t>(values.size()) != a.num_elements()) {
        throw std::runtime_error("every_op: array_of got " + std::to_string(values.size()) +
                                 " values for " + std::to_string(a.num_elements()) + " elements");
    }
    for (size_t i = 0; i < values.size(); ++i) store(a, static_cast<int64_t>(i), values[i]);
    return a;
}

std::vector<double> values_of(const NDArray& a) {
    std::vector<double> out(static_cast<size_t>(a.num_elements()));
    DLDataType t = a.dtype();
    for (size_t i = 0; i < out.size(); ++i) {
        if (t.code == kDLFloat && t.bits == 32) {
            out[i] = a.data<float>()[i];
        } else if (t.code == kDLFloat && t.bits == 64) {
            out[i] = a.data<double>()[i];
        } else if (t.code == kDLInt && t.bits == 64) {
            out[i] = double(a.data<int64_t>()[i]);
        } else if (t.code == kDLInt && t.bits == 32) {
            out[i] = a.data<int32_t>()[i];
        } else if (t.code == kDLInt && t.bits == 8) {
            out[i] = a.data<int8_t>()[i];
        } else if (t.code == kDLUInt && (t.bits == 8 || t.bits == 1)) {
            out[i] = a.data<uint8_t>()[i];
        } else {
            throw std::runtime_error("every_op: cannot read dtype " +
                                     runtime::dl_dtype_to_string(t));
        }
    }
    return out;
}

Shape strides_of(const Shape& shape) {
    Shape s(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
    return s;
}

int64_t broadcast_offset(const Shape& index, const Shape& shape) {
    int64_t off = 0;
    size_t lead = index.size() - shape.size();
    for (size_t d = 0; d < shape.size(); ++d) {
        off = off * shape[d] + (shape[d] == 1 ? 0 : index[lead + d]);
    }
    return off;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
    size_t r = std::max(a.size(), b.size());
    Shape out(r, 1);
    for (size_t d = 0; d < r; ++d) {
        int64_t x = d + a.size() >= r ? a[d + a.size() - r] : 1;
        int64_t y = d + b.size() >= r ? b[d + b.size() - r] : 1;
        out[d] = x == 1 ? y : x;
    }
    return out;
}

std::string tensor_type(const Shape& shape, const std::string& dtype) {
    std::ostringstream s;
    s << "Tensor[(";
    for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
    if (shape.size() == 1) s << ",";
    s << "), " << dtype << "]";
    return s.str();
}

std::string int_list(const std::vector<int64_t>& values) {
    std::string s = "[";
    for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
    return s + "]";
}

namespace {

// Compares a result with what the case wants; the first difference fails with `where` (the
// case and the position in nested results).
void compare(const VMValue& got, const Want& want, const std::string& where) {
    ASSERT_EQ(int(got.kind), int(want.kind)) << where << ": the result's kind differs";
    if (want.kind == VMValue::Kind::none) return;
    if (want.kind == VMValue::Kind::tuple) {
        ASSERT_EQ(got.fields.size(), want.fields.size()) << where << ": tuple size";
        for (size_t i = 0; i < want.fields.size(); ++i) {
            compare(got.fields[i], want.fields[i], where + "." + std::to_string(i));
        }
        return;
    }
    const NDArray& t = got.tensor;
    ASSERT_EQ(shape_of(t), want.shape) << where << ": shape";
    ASSERT_EQ(runtime::dl_dtype_to_string(t.dtype()), want.dtype) << where << ": dtype";
    if (runtime::is_string_dtype(t.dtype())) {
        std::vector<std::string> s;
        for (std::string_view v : runtime::string_values(t, where)) s.emplace_back(v);
        EXPECT_EQ(s, want.strings) << where;
        return;
    }
    std::vector<double> g = values_of(t);
    ASSERT_EQ(g.size(), want.values.size()) << where << ": the case wants a value per element";
    for (size_t i = 0; i < g.size(); ++i) {
        double w = want.values[i];
        bool same = g[i] == w || (std::isnan(g[i]) && std::isnan(w));
        double err = std::fabs(g[i] - w) / std::max(1.0, std::fabs(w));
        if (!same && !(err <= want.tol)) {
            ADD_FAILURE() << where << ": element " << i << " is " << g[i] << ", want " << w
                          << " (tolerance " << want.tol << ")";
            return;
        }
    }
}

}  // namespace

void run_cases(const std::vector<OpCase>& cases) {
    ASSERT_FALSE(cases.empty());
    for (const OpCase& c : cases) {
        SCOPED_TRACE(c.name);
        try {
            graph::IRModule m = graph::parse_module(c.text, ops::op_table());
            driver::CompiledModel model = driver::compile_model(m, "llvm -mcpu=native");
            driver::VMExecutable exe = driver::compile_vm(model.module);
            runtime::VirtualMachine vm(exe.program, testing::bytes_of(exe.params), model.kernels);
            VMValue out = vm.invoke("main", c.inputs);
            compare(out, c.want, c.name);
        } catch (const std::exception& e) {
            ADD_FAILURE() << c.name << " threw: " << e.what() << "\nmodule:\n" << c.text;
        }
    }
}

std::set<std::string> ops_called(const OpCase& c) {
    graph::IRModule m = graph::parse_module(c.text, ops::op_table());
    std::set<std::string> names;
    for (const auto& [name, f] : m.functions) {
        graph::post_order_visit(f->body, [&](const graph::Expr& e) {
            if (const auto* call = e.as<graph::Call>(); call && call->op.defined()) {
                names.insert(call->op->name);
            }
        });
    }
    return names;
}

}  // namespace anvil::every_op
