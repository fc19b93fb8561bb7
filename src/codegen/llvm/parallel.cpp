// Parallel loops: the body is outlined and run in contiguous chunks on the runtime thread pool.
//
//   for (i = min; i < min + extent; ++i) body          (Parallel)
// becomes
//   struct { captured values..., min, extent } closure = {...};
//   if (extent > 0 && anvil_parallel_launch(f.lambda.N, &closure, 0) != 0) return -1;
//
//   int f.lambda.N(int task, int num_tasks, void* closure)   unpacks the closure, computes the
//       task's chunk [begin, end) and calls
//   int f.par.N(noalias captured buffers..., captured scalars..., begin, end)
//       a serial loop over the chunk. Being a separate function with noalias, aligned pointer
//       parameters gives LLVM the same aliasing facts inside the task as in the caller.
#include "codegen/llvm/codegen_llvm.h"
#include "support/error.h"

namespace anvil::codegen {

void CodeGenLLVM::emit_parallel_for(const tir::For* op) {
    const int id = parallel_count_++;
    const std::string suffix = "." + std::to_string(id);
    const DataType loop_type = op->var->dtype;

    // What the body needs from outside: everything free except the loop variable itself.
    FreeSymbols free = collect_free_symbols(op->body);
    std::vector<Param> params;
    for (const auto& b : free.buffers) {
        const BufferInfo& info = buffer_info(b);
        params.push_back(Param{nullptr, b, info.align});
    }
    for (const auto& v : free.vars) {
        if (v.same_as(op->var)) continue;
        params.push_back(Param{v, nullptr, 1});
    }
    Ref<Var> begin_var = make_var(op->var->name + ".begin", loop_type);
    Ref<Var> end_var = make_var(op->var->name + ".end", loop_type);
    std::vector<Param> body_params = params;
    body_params.push_back(Param{begin_var, nullptr, 1});
    body_params.push_back(Param{end_var, nullptr, 1});
    tir::Stmt chunk =
        tir::make_for(op->var, begin_var, make_binary(ExprKind::Sub, end_var, begin_var),
                      tir::ForKind::Serial, op->body, "", op->loc);
    llvm::Function* body_fn = emit_body_function(func_name_ + ".par" + suffix, body_params, chunk);

    // The closure: captured values, then min and extent.
    std::vector<llvm::Type*> field_types;
    for (const auto& p : params) field_types.push_back(p.buffer ? ptr_ : llvm_type(p.var->dtype));
    llvm::Type* loop_ty = llvm_type(loop_type);
    field_types.push_back(loop_ty);
    field_types.push_back(loop_ty);
    auto* closure_ty =
        llvm::StructType::create(ctx_, field_types, func_name_ + ".closure" + suffix);

    // The task function.
    auto* lambda_ty = llvm::FunctionType::get(i32_, {i32_, i32_, ptr_}, false);
    auto* lambda = llvm::Function::Create(lambda_ty, llvm::GlobalValue::InternalLinkage,
                                          func_name_ + ".lambda" + suffix, module_);
    lambda->setDoesNotThrow();
    {
        llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx_, "entry", lambda));
        llvm::Value* closure = lambda->getArg(2);
        std::vector<llvm::Value*> args;
        for (unsigned i = 0; i < field_types.size(); ++i) {
            llvm::Value* addr = b.CreateStructGEP(closure_ty, closure, i);
            args.push_back(b.CreateLoad(field_types[i], addr));
        }
        llvm::Value* extent = b.CreateSExt(args.back(), i64_);
        args.pop_back();
        llvm::Value* min = args.back();
        args.pop_back();
        // Chunks of ceil(extent / num_tasks) iterations; trailing tasks may get none.
        llvm::Value* task = b.CreateSExt(lambda->getArg(0), i64_);
        llvm::Value* ntasks = b.CreateSExt(lambda->getArg(1), i64_);
        llvm::Value* step = b.CreateSDiv(
            b.CreateAdd(extent, b.CreateSub(ntasks, llvm::ConstantInt::get(i64_, 1))), ntasks);
        llvm::Value* lo =
            b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateMul(task, step), extent);
        llvm::Value* hi = b.CreateBinaryIntrinsic(
            llvm::Intrinsic::smin,
            b.CreateMul(b.CreateAdd(task, llvm::ConstantInt::get(i64_, 1)), step), extent);
        args.push_back(b.CreateAdd(min, b.CreateTrunc(lo, loop_ty)));
        args.push_back(b.CreateAdd(min, b.CreateTrunc(hi, loop_ty)));
        b.CreateRet(b.CreateCall(body_fn, args));
    }

    // The launch, in the current function.
    llvm::Value* min = emit(op->min);
    llvm::Value* extent = emit(op->extent);
    llvm::AllocaInst* closure = nullptr;
    {
        llvm::IRBuilder<> entry_builder(entry_, entry_->getFirstInsertionPt());
        closure = entry_builder.CreateAlloca(closure_ty, nullptr, "closure" + suffix);
    }
    unsigned field = 0;
    for (const auto& p : params) {
        llvm::Value* v = p.buffer ? buffer_info(p.buffer).ptr : emit(p.var);
        builder_.CreateStore(v, builder_.CreateStructGEP(closure_ty, closure, field++));
    }
    builder_.CreateStore(min, builder_.CreateStructGEP(closure_ty, closure, field++));
    builder_.CreateStore(extent, builder_.CreateStructGEP(closure_ty, closure, field++));

    auto* launch_bb = llvm::BasicBlock::Create(ctx_, "par_launch", function_);
    auto* fail_bb = llvm::BasicBlock::Create(ctx_, "par_fail", function_);
    auto* done_bb = llvm::BasicBlock::Create(ctx_, "par_done", function_);
    llvm::Value* nonempty =
        builder_.CreateICmpSGT(extent, llvm::ConstantInt::get(extent->getType(), 0));
    builder_.CreateCondBr(nonempty, launch_bb, done_bb);
    builder_.SetInsertPoint(launch_bb);
    llvm::Value* rc = builder_.CreateCall(runtime_function("anvil_parallel_launch"),
                                          {lambda, closure, llvm::ConstantInt::get(i32_, 0)});
    builder_.CreateCondBr(builder_.CreateICmpNE(rc, llvm::ConstantInt::get(i32_, 0)), fail_bb,
                          done_bb);
    // The failing task has set the error message already.
    builder_.SetInsertPoint(fail_bb);
    emit_error_return();
    builder_.CreateBr(done_bb);
    builder_.SetInsertPoint(done_bb);
}

}  // namespace anvil::codegen
