// CallPacked: a kernel calls a function of the runtime's global registry.
//
//   call_packed("env.scale", A, n)
// becomes
//   static AnvilFunctionHandle handle;            // @"__anvil_packed.env.scale", one per module
//   h = atomic load handle
//   if (!h) { look the name up (anvil_func_get_global); fail if it is not registered;
//             publish it with a compare-exchange (a thread that loses frees its own handle) }
//   DLTensor tA = {A.data, {kDLCPU, 0}, 1, dtype, shape_A, NULL, 0};
//   args = {&tA, (int64)n}; codes = {kAnvilDLTensor, kAnvilInt};
//   if (anvil_func_call(h, args, codes, 2, &ret, &ret_code) != 0) fail with
//       "kernel: call_packed("env.scale") failed: <the callee's message>"
//   if (ret_code == kAnvilFunction) anvil_func_free(ret)
//
// The handle is looked up once and kept for the life of the loaded module, so the registry is
// not locked on every call; re-registering a name (override) after a kernel has called it does
// not redirect that kernel. The module's ANVIL_MODULE_RELEASE_SYMBOL function gives the cached
// references back when the module is unloaded (without it every unload of a module would leak
// the functions its kernels called, and whatever they own).
#include <dlpack/dlpack.h>
#include <llvm/IR/MDBuilder.h>

#include <cstddef>

#include "anvil/runtime.h"
#include "codegen/llvm/codegen_llvm.h"
#include "support/error.h"

namespace anvil::codegen {

namespace {

// The DLPack dtype a callee sees for a buffer's element type; bool is the runtime's {kDLUInt, 1}.
DLDataType dl_dtype(DataType t) {
    if (t.is_bool()) return DLDataType{kDLUInt, 1, 1};
    return DLDataType{static_cast<uint8_t>(t.code()), static_cast<uint8_t>(t.bits()), 1};
}

}  // namespace

llvm::Value* CodeGenLLVM::packed_function_handle(const std::string& func) {
    const std::string symbol = "__anvil_packed." + func;
    llvm::GlobalVariable* cache = module_->getNamedGlobal(symbol);
    if (!cache) {
        cache = new llvm::GlobalVariable(*module_, ptr_, false, llvm::GlobalValue::InternalLinkage,
                                         llvm::ConstantPointerNull::get(ptr_), symbol);
        cache->setAlignment(llvm::Align(8));
    }
    llvm::IRBuilder<> entry_builder(entry_, entry_->getFirstInsertionPt());
    llvm::AllocaInst* slot = entry_builder.CreateAlloca(ptr_, nullptr, "packed_handle");
    llvm::LoadInst* cached = builder_.CreateAlignedLoad(ptr_, cache, llvm::Align(8));
    cached->setAtomic(llvm::AtomicOrdering::Acquire);
    builder_.CreateStore(cached, slot);

    auto* lookup = llvm::BasicBlock::Create(ctx_, "packed_lookup", function_);
    auto* ready = llvm::BasicBlock::Create(ctx_, "packed_ready", function_);
    builder_.CreateCondBr(builder_.CreateIsNull(cached), lookup, ready,
                          llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());

    builder_.SetInsertPoint(lookup);
    llvm::Value* rc =
        builder_.CreateCall(runtime_function("anvil_func_get_global"), {global_string(func), slot});
    auto* looked_up = llvm::BasicBlock::Create(ctx_, "packed_looked_up", function_);
    auto* lookup_failed = llvm::BasicBlock::Create(ctx_, "packed_lookup_failed", function_);
    builder_.CreateCondBr(builder_.CreateICmpEQ(rc, llvm::ConstantInt::get(i32_, 0)), looked_up,
                          lookup_failed);
    builder_.SetInsertPoint(lookup_failed);
    emit_error_return();  // the registry set the message
    builder_.CreateBr(looked_up);

    builder_.SetInsertPoint(looked_up);
    llvm::Value* found = builder_.CreateLoad(ptr_, slot);
    auto* missing = llvm::BasicBlock::Create(ctx_, "packed_missing", function_);
    auto* publish = llvm::BasicBlock::Create(ctx_, "packed_publish", function_);
    builder_.CreateCondBr(builder_.CreateIsNull(found), missing, publish);
    builder_.SetInsertPoint(missing);
    emit_fail(func_name_ + ": call_packed(\"" + func + "\"): no function named '" + func +
              "' is registered (register it before running the kernel: anvil_func_register, "
              "runtime::register_func or @anvil.register_func)");
    builder_.CreateBr(publish);

    builder_.SetInsertPoint(publish);
    llvm::Value* pair = builder_.CreateAtomicCmpXchg(
        cache, llvm::ConstantPointerNull::get(ptr_), found, llvm::MaybeAlign(8),
        llvm::AtomicOrdering::AcquireRelease, llvm::AtomicOrdering::Acquire);
    llvm::Value* won = builder_.CreateExtractValue(pair, 1);
    auto* lost = llvm::BasicBlock::Create(ctx_, "packed_lost_race", function_);
    builder_.CreateCondBr(won, ready, lost);
    builder_.SetInsertPoint(lost);
    builder_.CreateCall(runtime_function("anvil_func_free"), {found});
    builder_.CreateStore(builder_.CreateExtractValue(pair, 0), slot);
    builder_.CreateBr(ready);

    builder_.SetInsertPoint(ready);
    return builder_.CreateLoad(ptr_, slot, "handle");
}

bool CodeGenLLVM::add_packed_release() {
    std::vector<llvm::GlobalVariable*> caches;
    for (llvm::GlobalVariable& g : module_->globals()) {
        if (g.getName().starts_with("__anvil_packed.")) caches.push_back(&g);
    }
    if (caches.empty()) return false;
    // void release(void): each cache is exchanged with NULL, so a second call frees nothing twice.
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {}, false);
    auto* fn = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage,
                                      ANVIL_MODULE_RELEASE_SYMBOL, module_);
    fn->setDoesNotThrow();
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx_, "entry", fn));
    llvm::FunctionCallee free_func = runtime_function("anvil_func_free");
    for (llvm::GlobalVariable* cache : caches) {
        llvm::Value* handle = b.CreateAtomicRMW(
            llvm::AtomicRMWInst::Xchg, cache, llvm::ConstantPointerNull::get(ptr_),
            llvm::MaybeAlign(8), llvm::AtomicOrdering::AcquireRelease);
        // anvil_func_free accepts NULL (a kernel that never ran looked nothing up).
        b.CreateCall(free_func, {handle});
    }
    b.CreateRetVoid();
    return true;
}

void CodeGenLLVM::emit_stmt_(const tir::CallPacked* op) {
    const auto num_args = static_cast<uint64_t>(op->args.size());
    uint64_t num_tensors = 0, num_dims = 0;
    for (const auto& a : op->args) {
        if (!a.buffer.defined()) continue;
        ++num_tensors;
        num_dims += a.shape.size();
    }
    llvm::Value* handle = packed_function_handle(op->func);

    // Argument storage lives in the entry block, so a call inside a loop does not grow the stack.
    llvm::IRBuilder<> entry_builder(entry_, entry_->getFirstInsertionPt());
    auto array = [&](llvm::Type* elem, uint64_t n, const char* name) {
        llvm::AllocaInst* a = entry_builder.CreateAlloca(
            llvm::ArrayType::get(elem, std::max<uint64_t>(n, 1)), nullptr, name);
        a->setAlignment(llvm::Align(8));
        return a;
    };
    llvm::Type* i8 = builder_.getInt8Ty();
    llvm::Value* values = array(i64_, num_args, "packed_args");
    llvm::Value* codes = array(i32_, num_args, "packed_codes");
    llvm::Value* tensors = array(i8, num_tensors * sizeof(DLTensor), "packed_tensors");
    llvm::Value* dims = array(i64_, num_dims, "packed_shapes");
    llvm::Value* ret = array(i64_, 1, "packed_ret");
    llvm::Value* ret_code = array(i32_, 1, "packed_ret_code");
    builder_.CreateStore(llvm::ConstantInt::get(i32_, kAnvilNull), ret_code);

    auto byte_gep = [&](llvm::Value* base, uint64_t offset) {
        return builder_.CreateConstInBoundsGEP1_64(i8, base, offset);
    };
    auto store_i32 = [&](llvm::Value* base, uint64_t offset, int v) {
        builder_.CreateStore(llvm::ConstantInt::get(i32_, v), byte_gep(base, offset));
    };
    uint64_t tensor = 0, dim = 0;
    for (uint64_t i = 0; i < num_args; ++i) {
        const tir::PackedArg& a = op->args[i];
        llvm::Value* value_slot = builder_.CreateConstInBoundsGEP1_64(i64_, values, i);
        llvm::Value* code_slot = builder_.CreateConstInBoundsGEP1_64(i32_, codes, i);
        if (a.buffer.defined()) {
            llvm::Value* t = byte_gep(tensors, tensor++ * sizeof(DLTensor));
            llvm::Value* shape = builder_.CreateConstInBoundsGEP1_64(i64_, dims, dim);
            for (const auto& d : a.shape) {
                llvm::Value* v = builder_.CreateIntCast(emit(d), i64_, !d.dtype().is_uint());
                builder_.CreateStore(v, builder_.CreateConstInBoundsGEP1_64(i64_, dims, dim++));
            }
            const DLDataType dt = dl_dtype(a.buffer->dtype);
            builder_.CreateStore(buffer_info(a.buffer).ptr, byte_gep(t, offsetof(DLTensor, data)));
            store_i32(t, offsetof(DLTensor, device) + offsetof(DLDevice, device_type), kDLCPU);
            store_i32(t, offsetof(DLTensor, device) + offsetof(DLDevice, device_id), 0);
            store_i32(t, offsetof(DLTensor, ndim), static_cast<int>(a.shape.size()));
            const uint64_t dtype = offsetof(DLTensor, dtype);
            builder_.CreateStore(builder_.getInt8(dt.code), byte_gep(t, dtype));
            builder_.CreateStore(builder_.getInt8(dt.bits), byte_gep(t, dtype + 1));
            builder_.CreateStore(builder_.getInt16(dt.lanes), byte_gep(t, dtype + 2));
            builder_.CreateStore(shape, byte_gep(t, offsetof(DLTensor, shape)));
            builder_.CreateStore(llvm::ConstantPointerNull::get(ptr_),
                                 byte_gep(t, offsetof(DLTensor, strides)));
            builder_.CreateStore(llvm::ConstantInt::get(i64_, 0),
                                 byte_gep(t, offsetof(DLTensor, byte_offset)));
            builder_.CreateStore(t, value_slot);
            builder_.CreateStore(llvm::ConstantInt::get(i32_, kAnvilDLTensor), code_slot);
            continue;
        }
        DataType vt = a.value.dtype();
        llvm::Value* v = emit(a.value);
        if (vt.is_floating()) {  // float16 and bfloat16 too, widened
            v = builder_.CreateFPExt(to_compute_float(vt, v), builder_.getDoubleTy());
            builder_.CreateStore(v, value_slot);
            builder_.CreateStore(llvm::ConstantInt::get(i32_, kAnvilFloat), code_slot);
        } else {
            v = builder_.CreateIntCast(v, i64_, vt.is_int());
            builder_.CreateStore(v, value_slot);
            builder_.CreateStore(llvm::ConstantInt::get(i32_, kAnvilInt), code_slot);
        }
    }

    llvm::Value* rc = builder_.CreateCall(
        runtime_function("anvil_func_call"),
        {handle, values, codes, llvm::ConstantInt::get(i32_, static_cast<int>(num_args)), ret,
         ret_code});
    auto* failed = llvm::BasicBlock::Create(ctx_, "packed_failed", function_);
    auto* done = llvm::BasicBlock::Create(ctx_, "packed_done", function_);
    builder_.CreateCondBr(builder_.CreateICmpEQ(rc, llvm::ConstantInt::get(i32_, 0)), done, failed,
                          llvm::MDBuilder(ctx_).createLikelyBranchWeights());
    builder_.SetInsertPoint(failed);
    {
        // Prefix the callee's message with the kernel and the function it called.
        llvm::AllocaInst* msg = entry_builder.CreateAlloca(llvm::ArrayType::get(i8, kMessageBytes),
                                                           nullptr, "packed_message");
        llvm::Value* inner = builder_.CreateCall(runtime_function("anvil_get_last_error"), {});
        builder_.CreateCall(runtime_function("snprintf"),
                            {msg, llvm::ConstantInt::get(i64_, kMessageBytes),
                             global_string(escape_percent(func_name_ + ": call_packed(\"" +
                                                          op->func + "\") failed: ") +
                                           "%s"),
                             inner});
        builder_.CreateCall(runtime_function("anvil_set_last_error"), {msg});
        emit_error_return();
        builder_.CreateBr(done);
    }
    builder_.SetInsertPoint(done);
    // A returned function carries a reference the caller must drop; other results need nothing.
    auto* drop = llvm::BasicBlock::Create(ctx_, "packed_drop_result", function_);
    auto* after = llvm::BasicBlock::Create(ctx_, "packed_after", function_);
    llvm::Value* code = builder_.CreateLoad(i32_, ret_code);
    builder_.CreateCondBr(builder_.CreateICmpEQ(code, llvm::ConstantInt::get(i32_, kAnvilFunction)),
                          drop, after);
    builder_.SetInsertPoint(drop);
    builder_.CreateCall(runtime_function("anvil_func_free"), {builder_.CreateLoad(ptr_, ret)});
    builder_.CreateBr(after);
    builder_.SetInsertPoint(after);
}

}  // namespace anvil::codegen
