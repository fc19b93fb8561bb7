// Helpers shared by the codegen tests: hand-built flattened PrimFuncs and runtime tensors.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "codegen/llvm/llvm_module.h"
#include "codegen/target.h"
#include "ir/expr.h"
#include "runtime/ndarray.h"
#include "runtime/packed_func.h"
#include "tir/stmt.h"

namespace anvil::codegen_test {

inline const Target& host_target() {
    static const Target t = Target::host();
    return t;
}

// The runtime's DLPack spelling of an IR element type (bool is {kDLUInt, 1}).
inline DLDataType dl(DataType t) {
    if (t.is_bool()) return DLDataType{kDLUInt, 1, 1};
    return DLDataType{static_cast<uint8_t>(t.code()), static_cast<uint8_t>(t.bits()), 1};
}

template <typename T>
runtime::NDArray make_array(const std::vector<T>& values, DataType t,
                            std::vector<int64_t> shape = {}) {
    if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
    runtime::NDArray a = runtime::NDArray::empty(shape, dl(t));
    a.copy_from(values);
    return a;
}

inline runtime::NDArray make_empty(DataType t, std::vector<int64_t> shape) {
    runtime::NDArray a = runtime::NDArray::empty(shape, dl(t));
    std::memset(a.raw_data(), 0, a.nbytes());
    return a;
}

inline PrimExpr i32(int64_t v) {
    return make_int(DataType::int32(), v);
}

// f(A, B, C): for i in [0, n / lanes): C[idx] = body(A[idx], B[idx]) with idx = i (lanes 1) or
// ramp(i * lanes, 1, lanes).
using Body2 = std::function<PrimExpr(PrimExpr, PrimExpr)>;
inline Ref<tir::PrimFunc> elementwise2(const std::string& name, DataType ta, DataType tb,
                                       DataType tc, int64_t n, int lanes, const Body2& body) {
    auto A = make_buffer("A", ta, {i32(n)});
    auto B = make_buffer("B", tb, {i32(n)});
    auto C = make_buffer("C", tc, {i32(n)});
    auto i = make_var("i");
    PrimExpr idx = lanes == 1 ? PrimExpr(i) : make_ramp(i * lanes, i32(1), lanes);
    tir::Stmt store = tir::make_store(C, body(make_load(A, {idx}), make_load(B, {idx})), {idx});
    tir::Stmt loop = tir::make_for(i, i32(0), i32(n / lanes), tir::ForKind::Serial, store);
    return tir::make_prim_func(name, {A, B, C}, loop);
}

inline runtime::PackedFunc jit(const Ref<tir::PrimFunc>& f) {
    runtime::Module m = codegen::build_llvm({f}, host_target());
    return m.get_function(f->name);
}

// The message of the UserError `fn` throws, or "" when it does not throw.
inline std::string error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

}  // namespace anvil::codegen_test
