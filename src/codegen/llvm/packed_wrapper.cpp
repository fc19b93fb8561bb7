// The exported entry of a PrimFunc: the runtime's packed calling convention plus argument checks.
//
//   int f(const AnvilValue* args, const int* type_codes, int num_args,
//         AnvilValue* ret, int* ret_type_code, void* resource)
//
// Checks, in order, each failing with anvil_set_last_error and -1:
//   the number of arguments; each type code (tensor for buffers, int/float for scalars);
//   per tensor: not null, ndim, dtype (code, bits, lanes), on the CPU;
//   shapes: constant dimensions must match, a dimension that is a variable (or a cast of one,
//   see dimension_var) binds it (first occurrence) or must equal it and must not be negative,
//   other dimension expressions must evaluate equal;
//   strides absent or compact row-major; data (plus byte_offset) aligned to 64 bytes, which the
//   implementation's `align 64` parameters promise to LLVM.
// Messages name the function, the argument's index and name, and what was expected, e.g.
//   matmul: argument 2 'B' has shape [5, 6], expected [4, 6]
#include <dlpack/dlpack.h>
#include <llvm/IR/MDBuilder.h>

#include <cstddef>
#include <functional>
#include <sstream>
#include <unordered_set>

#include "anvil/runtime.h"
#include "codegen/llvm/codegen_llvm.h"
#include "ir/expr_functor.h"
#include "support/error.h"

namespace anvil::codegen {

namespace {

// The DLPack (code, bits) pairs accepted for a buffer's element type. bool tensors store one byte
// per element; the runtime spells bool {kDLUInt, 1} (DLPack's traditional form), DLPack 0.8
// {kDLBool = 6, 8}, and Anvil's DataType {Bool = 5, 1}.
std::vector<std::pair<int, int>> accepted_dtypes(DataType t) {
    if (t.is_bool()) return {{1, 1}, {6, 8}, {5, 1}, {5, 8}};
    return {{static_cast<int>(t.code()), t.bits()}};
}

std::string shape_text(const Buffer& b) {
    std::ostringstream os;
    os << "[";
    for (size_t i = 0; i < b.shape.size(); ++i) os << (i ? ", " : "") << b.shape[i];
    os << "]";
    return os.str();
}

}  // namespace

std::string escape_percent(const std::string& s) {
    std::string out;
    for (char c : s) {
        out += c;
        if (c == '%') out += '%';
    }
    return out;
}

void CodeGenLLVM::emit_packed_wrapper(const tir::PrimFunc& f, llvm::Function* impl,
                                      const std::vector<Param>& impl_params) {
    vars_.clear();
    buffers_.clear();
    live_workspace_.clear();
    var_multiple_.clear();
    auto* fty = llvm::FunctionType::get(i32_, {ptr_, ptr_, i32_, ptr_, ptr_, ptr_}, false);
    function_ = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, f.name, module_);
    function_->setDoesNotThrow();
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", function_);
    builder_.SetInsertPoint(entry_);
    llvm::Value* args = function_->getArg(0);
    llvm::Value* codes = function_->getArg(1);
    llvm::Value* num_args = function_->getArg(2);
    args->setName("args");
    codes->setName("type_codes");
    num_args->setName("num_args");

    const std::string fname = escape_percent(f.name);
    llvm::AllocaInst* msg = builder_.CreateAlloca(
        llvm::ArrayType::get(builder_.getInt8Ty(), kMessageBytes), nullptr, "message");
    // Branches to a failure block when `ok` is false; `fail` emits the message and returns.
    auto check = [&](llvm::Value* ok, const std::function<void()>& fail) {
        auto* fail_bb = llvm::BasicBlock::Create(ctx_, "check_fail", function_);
        auto* ok_bb = llvm::BasicBlock::Create(ctx_, "check_ok", function_);
        builder_.CreateCondBr(ok, ok_bb, fail_bb,
                              llvm::MDBuilder(ctx_).createLikelyBranchWeights());
        builder_.SetInsertPoint(fail_bb);
        fail();
        builder_.CreateBr(ok_bb);
        builder_.SetInsertPoint(ok_bb);
    };
    auto fail_format = [&](const std::string& format, std::vector<llvm::Value*> values) {
        std::vector<llvm::Value*> call_args{msg, llvm::ConstantInt::get(i64_, kMessageBytes),
                                            global_string(format)};
        call_args.insert(call_args.end(), values.begin(), values.end());
        builder_.CreateCall(runtime_function("snprintf"), call_args);
        builder_.CreateCall(runtime_function("anvil_set_last_error"), {msg});
        emit_error_return();
    };
    auto i32c = [&](int v) { return llvm::ConstantInt::get(i32_, v); };
    auto i64c = [&](int64_t v) { return llvm::ConstantInt::get(i64_, v); };
    auto byte_gep = [&](llvm::Value* base, size_t offset) {
        return builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), base, offset);
    };

    // ---- the number of arguments
    const int num_buffers = static_cast<int>(f.params.size());
    const int expected_args = num_buffers + static_cast<int>(f.scalar_params.size());
    std::string names;
    for (const auto& b : f.params) names += (names.empty() ? "" : ", ") + escape_percent(b->name);
    for (const auto& v : f.scalar_params) {
        names += (names.empty() ? "" : ", ") + escape_percent(v->name);
    }
    check(builder_.CreateICmpEQ(num_args, i32c(expected_args)), [&] {
        fail_format(fname + ": expected " + std::to_string(expected_args) + " arguments (" + names +
                        "), got %d",
                    {num_args});
    });

    // ---- type codes
    std::vector<llvm::Value*> code_of(expected_args);
    for (int i = 0; i < expected_args; ++i) {
        code_of[i] = builder_.CreateLoad(i32_, builder_.CreateConstInBoundsGEP1_64(i32_, codes, i));
        const bool is_buffer = i < num_buffers;
        DataType t = is_buffer ? DataType::handle() : f.scalar_params[i - num_buffers]->dtype;
        std::string what =
            "argument " + std::to_string(i) + " '" +
            escape_percent(is_buffer ? f.params[i]->name : f.scalar_params[i - num_buffers]->name) +
            "'";
        llvm::Value* ok = nullptr;
        std::string expected;
        if (is_buffer) {
            ok = builder_.CreateICmpEQ(code_of[i], i32c(kAnvilDLTensor));
            expected = "a tensor (type code " + std::to_string(kAnvilDLTensor) + ")";
        } else if (t.is_floating()) {
            // An integer is accepted where a float is expected, as Python passes `2` for 2.0.
            ok = builder_.CreateOr(builder_.CreateICmpEQ(code_of[i], i32c(kAnvilFloat)),
                                   builder_.CreateICmpEQ(code_of[i], i32c(kAnvilInt)));
            expected = "a float (type code " + std::to_string(kAnvilFloat) + ")";
        } else if (t.is_handle()) {
            ok = builder_.CreateICmpNE(code_of[i], i32c(kAnvilStr));
            expected = "a handle (type code " + std::to_string(kAnvilHandle) + ")";
        } else {
            ok = builder_.CreateICmpEQ(code_of[i], i32c(kAnvilInt));
            expected = "an integer (type code " + std::to_string(kAnvilInt) + ")";
        }
        check(ok, [&] {
            fail_format(fname + ": " + what + " must be " + expected + ", got type code %d",
                        {code_of[i]});
        });
    }

    // ---- scalars
    for (int i = num_buffers; i < expected_args; ++i) {
        const Ref<Var>& v = f.scalar_params[i - num_buffers];
        DataType t = v->dtype;
        llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(i64_, args, i);
        llvm::Value* value = nullptr;
        if (t.is_floating()) {
            llvm::Value* as_double = builder_.CreateSelect(
                builder_.CreateICmpEQ(code_of[i], i32c(kAnvilInt)),
                builder_.CreateSIToFP(builder_.CreateLoad(i64_, slot), builder_.getDoubleTy()),
                builder_.CreateLoad(builder_.getDoubleTy(), slot));
            value = emit_cast(DataType::float64(), t, as_double);
        } else if (t.is_handle()) {
            value = builder_.CreateLoad(ptr_, slot);
        } else {
            value = emit_cast(DataType::int64(), t, builder_.CreateLoad(i64_, slot));
        }
        value->setName(v->name);
        vars_[v.get()] = value;
    }

    // ---- tensors: null, ndim, dtype, device
    std::vector<llvm::Value*> tensor(num_buffers), shape(num_buffers);
    for (int i = 0; i < num_buffers; ++i) {
        const Buffer& b = *f.params[i];
        const std::string what =
            fname + ": argument " + std::to_string(i) + " '" + escape_percent(b.name) + "'";
        tensor[i] = builder_.CreateLoad(ptr_, builder_.CreateConstInBoundsGEP1_64(i64_, args, i),
                                        b.name + ".tensor");
        check(builder_.CreateIsNotNull(tensor[i]), [&] { emit_fail(what + " is a null tensor"); });

        const int ndim = static_cast<int>(b.shape.size());
        llvm::Value* actual_ndim =
            builder_.CreateLoad(i32_, byte_gep(tensor[i], offsetof(DLTensor, ndim)));
        check(builder_.CreateICmpEQ(actual_ndim, i32c(ndim)), [&] {
            fail_format(what + " has %d dimensions, expected " + std::to_string(ndim) + " (shape " +
                            escape_percent(shape_text(b)) + ")",
                        {actual_ndim});
        });

        llvm::Value* dt = byte_gep(tensor[i], offsetof(DLTensor, dtype));
        llvm::Value* code = builder_.CreateZExt(
            builder_.CreateLoad(builder_.getInt8Ty(), byte_gep(dt, offsetof(DLDataType, code))),
            i32_);
        llvm::Value* bits = builder_.CreateZExt(
            builder_.CreateLoad(builder_.getInt8Ty(), byte_gep(dt, offsetof(DLDataType, bits))),
            i32_);
        llvm::Value* lanes = builder_.CreateZExt(
            builder_.CreateLoad(builder_.getInt16Ty(), byte_gep(dt, offsetof(DLDataType, lanes))),
            i32_);
        llvm::Value* dtype_ok = builder_.getFalse();
        for (auto [c, nbits] : accepted_dtypes(b.dtype)) {
            dtype_ok = builder_.CreateOr(
                dtype_ok, builder_.CreateAnd(builder_.CreateICmpEQ(code, i32c(c)),
                                             builder_.CreateICmpEQ(bits, i32c(nbits))));
        }
        dtype_ok = builder_.CreateAnd(dtype_ok, builder_.CreateICmpEQ(lanes, i32c(1)));
        auto [want_code, want_bits] = accepted_dtypes(b.dtype).front();
        check(dtype_ok, [&] {
            fail_format(what + " has dtype (code %d, bits %d, lanes %d), expected " +
                            b.dtype.str() + " (code " + std::to_string(want_code) + ", bits " +
                            std::to_string(want_bits) + ", lanes 1)",
                        {code, bits, lanes});
        });

        llvm::Value* device_type = builder_.CreateLoad(
            i32_,
            byte_gep(tensor[i], offsetof(DLTensor, device) + offsetof(DLDevice, device_type)));
        check(builder_.CreateICmpEQ(device_type, i32c(kDLCPU)), [&] {
            fail_format(what + " is on device type %d, expected the CPU (" +
                            std::to_string(static_cast<int>(kDLCPU)) + ")",
                        {device_type});
        });
        shape[i] = builder_.CreateLoad(ptr_, byte_gep(tensor[i], offsetof(DLTensor, shape)),
                                       b.name + ".shape");
    }

    // ---- shapes: bind plain variables at their first occurrence, then check every dimension
    std::vector<std::vector<llvm::Value*>> dims(num_buffers);
    for (int i = 0; i < num_buffers; ++i) {
        const Buffer& b = *f.params[i];
        for (size_t k = 0; k < b.shape.size(); ++k) {
            dims[i].push_back(
                builder_.CreateLoad(i64_, builder_.CreateConstInBoundsGEP1_64(i64_, shape[i], k),
                                    b.name + ".dim" + std::to_string(k)));
            if (const Var* v = dimension_var(b.shape[k])) {
                if (!vars_.count(v)) {
                    llvm::Value* bound = emit_cast(DataType::int64(), v->dtype, dims[i][k]);
                    bound->setName(v->name);
                    vars_[v] = bound;
                }
            }
        }
    }
    for (int i = 0; i < num_buffers; ++i) {
        const Buffer& b = *f.params[i];
        if (b.shape.empty()) continue;
        llvm::Value* ok = builder_.getTrue();
        std::string expected = "[";
        std::vector<llvm::Value*> bound_values;
        std::string bound_text;
        std::unordered_set<const Var*> listed;
        for (size_t k = 0; k < b.shape.size(); ++k) {
            const PrimExpr& d = b.shape[k];
            pre_order_visit(d, [&](const PrimExpr& e) {
                auto* v = e.as<Var>();
                if (v && !vars_.count(v)) {
                    user_error(f.body->loc)
                        << f.name << ": the value of '" << v->name << "' in the shape of '"
                        << b.name << "' cannot be determined from the arguments: it appears "
                        << "only inside shape expressions; make it a scalar parameter or a "
                        << "dimension of its own";
                }
            });
            expected += (k ? ", " : "") + escape_percent(to_string(d));
            llvm::Value* want = emit_cast(d.dtype(), DataType::int64(), emit(d));
            ok = builder_.CreateAnd(ok, builder_.CreateICmpEQ(dims[i][k], want));
            // The loop IR assumes dimension variables are sizes that fit every dimension they
            // make (Analyzer::bind_dimensions): the variable itself, not only its cast, must
            // equal the dimension, which must not be negative.
            if (const Var* v = dimension_var(d)) {
                llvm::Value* value =
                    emit_cast(v->dtype, DataType::int64(), emit(PrimExpr(Ref<Var>(v))));
                ok = builder_.CreateAnd(ok, builder_.CreateICmpEQ(dims[i][k], value));
                ok = builder_.CreateAnd(ok, builder_.CreateICmpSGE(dims[i][k], i64c(0)));
            }
            if (d.is<IntImm>()) continue;
            pre_order_visit(d, [&](const PrimExpr& e) {
                auto* v = e.as<Var>();
                if (!v || !listed.insert(v).second) return;
                bound_text +=
                    (bound_text.empty() ? " with " : ", ") + escape_percent(v->name) + " = %lld";
                bound_values.push_back(
                    emit_cast(v->dtype, DataType::int64(), emit(PrimExpr(Ref<Var>(v)))));
            });
        }
        expected += "]" + bound_text;
        std::string actual = "[";
        for (size_t k = 0; k < b.shape.size(); ++k) actual += k ? ", %lld" : "%lld";
        actual += "]";
        check(ok, [&] {
            std::vector<llvm::Value*> values = dims[i];
            values.insert(values.end(), bound_values.begin(), bound_values.end());
            fail_format(fname + ": argument " + std::to_string(i) + " '" + escape_percent(b.name) +
                            "' has shape " + actual + ", expected " + expected,
                        values);
        });
    }

    // ---- strides, data pointer, alignment
    std::vector<llvm::Value*> data(num_buffers);
    for (int i = 0; i < num_buffers; ++i) {
        const Buffer& b = *f.params[i];
        const std::string what =
            fname + ": argument " + std::to_string(i) + " '" + escape_percent(b.name) + "'";
        llvm::Value* strides =
            builder_.CreateLoad(ptr_, byte_gep(tensor[i], offsetof(DLTensor, strides)));
        auto* strided_bb = llvm::BasicBlock::Create(ctx_, "strides", function_);
        auto* next_bb = llvm::BasicBlock::Create(ctx_, "strides_done", function_);
        builder_.CreateCondBr(builder_.CreateIsNull(strides), next_bb, strided_bb);
        builder_.SetInsertPoint(strided_bb);
        // Explicit strides are fine when they describe the compact row-major layout; a
        // dimension of extent 1 may have any stride.
        llvm::Value* ok = builder_.getTrue();
        llvm::Value* expect = i64c(1);
        for (int k = static_cast<int>(b.shape.size()) - 1; k >= 0; --k) {
            llvm::Value* s =
                builder_.CreateLoad(i64_, builder_.CreateConstInBoundsGEP1_64(i64_, strides, k));
            llvm::Value* good = builder_.CreateOr(builder_.CreateICmpEQ(s, expect),
                                                  builder_.CreateICmpEQ(dims[i][k], i64c(1)));
            ok = builder_.CreateAnd(ok, good);
            expect = builder_.CreateMul(expect, dims[i][k]);
        }
        check(ok, [&] {
            emit_fail(what +
                      " is not a compact row-major tensor (its strides describe another "
                      "layout); make it contiguous first");
        });
        builder_.CreateBr(next_bb);
        builder_.SetInsertPoint(next_bb);

        llvm::Value* base =
            builder_.CreateLoad(ptr_, byte_gep(tensor[i], offsetof(DLTensor, data)));
        llvm::Value* offset =
            builder_.CreateLoad(i64_, byte_gep(tensor[i], offsetof(DLTensor, byte_offset)));
        data[i] = builder_.CreateInBoundsGEP(builder_.getInt8Ty(), base, offset, b.name + ".data");
        llvm::Value* misaligned =
            builder_.CreateAnd(builder_.CreatePtrToInt(data[i], i64_), i64c(kBufferAlign - 1));
        check(builder_.CreateICmpEQ(misaligned, i64c(0)), [&] {
            fail_format(what + " has data at %p, which is not " + std::to_string(kBufferAlign) +
                            "-byte aligned as Anvil kernels require (allocate tensors with "
                            "anvil_tensor_alloc)",
                        {data[i]});
        });
    }

    // ---- the call
    std::vector<llvm::Value*> call_args;
    for (const auto& p : impl_params) {
        if (p.buffer) {
            for (int i = 0; i < num_buffers; ++i) {
                if (f.params[i].same_as(p.buffer)) call_args.push_back(data[i]);
            }
            continue;
        }
        auto it = vars_.find(p.var.get());
        if (it == vars_.end()) {
            user_error(f.body->loc) << f.name << ": the value of '" << p.var->name
                                    << "' cannot be determined from the arguments: it appears in "
                                       "buffer shapes only inside expressions; make it a scalar "
                                       "parameter or a dimension of its own";
        }
        call_args.push_back(it->second);
    }
    builder_.CreateRet(builder_.CreateCall(impl, call_args));
    vars_.clear();
}

}  // namespace anvil::codegen
