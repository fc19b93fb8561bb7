// Functions and statements: loops, lets, stores, allocations, branches, assertions.
#include <llvm/IR/MDBuilder.h>

#include <unordered_set>

#include "codegen/llvm/codegen_llvm.h"
#include "support/error.h"
#include "tir/stmt_functor.h"

namespace anvil::codegen {

// ---- free symbols --------------------------------------------------------------------------

namespace {

class FreeSymbolCollector : public tir::StmtVisitor {
public:
    FreeSymbols result;

protected:
    void visit_(const Var* op) override {
        if (defined_.count(op) || seen_vars_.count(op)) return;
        seen_vars_.insert(op);
        result.vars.push_back(Ref<Var>(op));
    }
    void visit_buffer(const Ref<Buffer>& b) override {
        if (allocated_.count(b.get()) || seen_buffers_.count(b.get())) return;
        seen_buffers_.insert(b.get());
        result.buffers.push_back(b);
    }
    void visit_stmt_(const tir::LetStmt* op) override {
        visit_expr(op->value);
        defined_.insert(op->var.get());
        visit_stmt(op->body);
    }
    void visit_stmt_(const tir::For* op) override {
        visit_expr(op->min);
        visit_expr(op->extent);
        defined_.insert(op->var.get());
        visit_stmt(op->body);
    }
    void visit_stmt_(const tir::Allocate* op) override {
        for (const auto& d : op->buffer->shape) visit_expr(d);
        allocated_.insert(op->buffer.get());
        visit_stmt(op->body);
    }

private:
    std::unordered_set<const Var*> defined_, seen_vars_;
    std::unordered_set<const Buffer*> allocated_, seen_buffers_;
};

}  // namespace

FreeSymbols collect_free_symbols(const tir::Stmt& s) {
    FreeSymbolCollector c;
    c.visit_stmt(s);
    return std::move(c.result);
}

// ---- module-level helpers --------------------------------------------------------------------

CodeGenLLVM::CodeGenLLVM(llvm::Module* module, const Target& target)
    : module_(module), ctx_(module->getContext()), target_(target), builder_(module->getContext()) {
    i32_ = llvm::Type::getInt32Ty(ctx_);
    i64_ = llvm::Type::getInt64Ty(ctx_);
    ptr_ = llvm::PointerType::getUnqual(ctx_);
}

llvm::FunctionCallee CodeGenLLVM::runtime_function(const std::string& name) {
    llvm::Type* void_ty = llvm::Type::getVoidTy(ctx_);
    llvm::FunctionType* fty = nullptr;
    if (name == "anvil_set_last_error") {
        fty = llvm::FunctionType::get(void_ty, {ptr_}, false);
    } else if (name == "anvil_parallel_launch") {
        fty = llvm::FunctionType::get(i32_, {ptr_, ptr_, i32_}, false);
    } else if (name == "anvil_workspace_alloc") {
        fty = llvm::FunctionType::get(ptr_, {i64_}, false);
    } else if (name == "anvil_workspace_free") {
        fty = llvm::FunctionType::get(void_ty, {ptr_}, false);
    } else if (name == "anvil_get_last_error") {
        fty = llvm::FunctionType::get(ptr_, {}, false);
    } else if (name == "anvil_func_get_global") {
        fty = llvm::FunctionType::get(i32_, {ptr_, ptr_}, false);
    } else if (name == "anvil_func_call") {
        fty = llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_, i32_, ptr_, ptr_}, false);
    } else if (name == "anvil_func_free") {
        fty = llvm::FunctionType::get(i32_, {ptr_}, false);
    } else if (name == "anvil_request_amx") {
        fty = llvm::FunctionType::get(i32_, {}, false);
    } else if (name == "snprintf") {
        fty = llvm::FunctionType::get(i32_, {ptr_, i64_, ptr_}, true);
    } else {
        internal_error() << "unknown runtime function " << name;
    }
    llvm::FunctionCallee f = module_->getOrInsertFunction(name, fty);
    if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) fn->setDoesNotThrow();
    return f;
}

llvm::Value* CodeGenLLVM::global_string(const std::string& s) {
    return builder_.CreateGlobalString(s, ".str", 0, module_);
}

void CodeGenLLVM::add_function_names(const std::vector<std::string>& names) {
    std::string blob;
    for (const auto& n : names) blob += n + '\0';
    blob += '\0';
    auto* init = llvm::ConstantDataArray::getString(ctx_, blob, /*AddNull=*/false);
    auto* gv = new llvm::GlobalVariable(*module_, init->getType(), true,
                                        llvm::GlobalValue::ExternalLinkage, init,
                                        "__anvil_function_names");
    gv->setAlignment(llvm::Align(1));
}

// ---- functions ----------------------------------------------------------------------------------

llvm::Function* CodeGenLLVM::emit_body_function(const std::string& name,
                                                const std::vector<Param>& params,
                                                const tir::Stmt& body) {
    // Parallel loops emit functions while another is half done: keep the outer state aside.
    auto saved_vars = std::move(vars_);
    auto saved_multiple = std::move(var_multiple_);
    auto saved_buffers = std::move(buffers_);
    auto saved_workspace = std::move(live_workspace_);
    llvm::Value* saved_message_buffer = message_buffer_;
    message_buffer_ = nullptr;
    const int64_t saved_stack_bytes = stack_bytes_;
    stack_bytes_ = 0;
    llvm::Function* saved_function = function_;
    llvm::BasicBlock* saved_entry = entry_;
    llvm::IRBuilderBase::InsertPoint saved_ip = builder_.saveIP();
    vars_.clear();
    var_multiple_.clear();
    buffers_.clear();
    live_workspace_.clear();

    std::vector<llvm::Type*> types;
    for (const auto& p : params) types.push_back(p.buffer ? ptr_ : llvm_type(p.var->dtype));
    auto* fty = llvm::FunctionType::get(i32_, types, false);
    function_ = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage, name, module_);
    function_->setDoesNotThrow();
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", function_);
    builder_.SetInsertPoint(entry_);
    for (size_t i = 0; i < params.size(); ++i) {
        llvm::Argument* arg = function_->getArg(static_cast<unsigned>(i));
        if (params[i].buffer) {
            arg->setName(params[i].buffer->name);
            // Distinct tensors never overlap (a documented requirement on callers), which is
            // what lets LLVM vectorize loops that read one buffer and write another.
            arg->addAttr(llvm::Attribute::NoAlias);
            arg->addAttr(llvm::Attribute::NoCapture);
            const int64_t align = params[i].align;
            if (align > 1) {
                arg->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(align)));
            }
            buffers_[params[i].buffer.get()] = BufferInfo{arg, align};
        } else {
            arg->setName(params[i].var->name);
            vars_[params[i].var.get()] = arg;
        }
    }
    emit_stmt(body);
    builder_.CreateRet(llvm::ConstantInt::get(i32_, 0));
    llvm::Function* result = function_;

    vars_ = std::move(saved_vars);
    var_multiple_ = std::move(saved_multiple);
    buffers_ = std::move(saved_buffers);
    live_workspace_ = std::move(saved_workspace);
    message_buffer_ = saved_message_buffer;
    stack_bytes_ = saved_stack_bytes;
    function_ = saved_function;
    entry_ = saved_entry;
    builder_.restoreIP(saved_ip);
    return result;
}

void CodeGenLLVM::emit_error_return() {
    for (auto it = live_workspace_.rbegin(); it != live_workspace_.rend(); ++it) {
        builder_.CreateCall(runtime_function("anvil_workspace_free"), {*it});
    }
    builder_.CreateRet(llvm::ConstantInt::get(i32_, -1));
    // Code after the return point is unreachable but the builder needs a block to continue in.
    builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "after_error", function_));
}

void CodeGenLLVM::emit_fail(const std::string& message) {
    builder_.CreateCall(runtime_function("anvil_set_last_error"), {global_string(message)});
    emit_error_return();
}

void CodeGenLLVM::emit_fail_formatted(const std::string& message,
                                      const std::vector<llvm::Value*>& values) {
    std::string format;
    size_t start = 0;
    for (size_t k = message.find("{}"); k != std::string::npos; k = message.find("{}", start)) {
        format += escape_percent(message.substr(start, k - start)) + "%lld";
        start = k + 2;
    }
    format += escape_percent(message.substr(start));
    // One buffer per function, in the entry block: a kernel may hold hundreds of checks.
    if (!message_buffer_) {
        llvm::IRBuilder<> entry_builder(entry_, entry_->getFirstInsertionPt());
        message_buffer_ = entry_builder.CreateAlloca(
            llvm::ArrayType::get(builder_.getInt8Ty(), kMessageBytes), nullptr, "assert_message");
    }
    llvm::Value* buf = message_buffer_;
    std::vector<llvm::Value*> args = {buf, llvm::ConstantInt::get(i64_, kMessageBytes),
                                      global_string(format)};
    args.insert(args.end(), values.begin(), values.end());
    builder_.CreateCall(runtime_function("snprintf"), args);
    builder_.CreateCall(runtime_function("anvil_set_last_error"), {buf});
    emit_error_return();
}

void CodeGenLLVM::add_function(const tir::PrimFunc& f) {
    func_name_ = f.name;
    parallel_count_ = 0;
    // The implementation takes every buffer, every scalar parameter and every variable that
    // appears in a buffer shape (bound by the packed entry from the tensors' shapes).
    std::vector<Param> params;
    std::unordered_set<const Var*> seen;
    for (const auto& b : f.params) params.push_back(Param{nullptr, b, kBufferAlign});
    for (const auto& v : f.scalar_params) {
        if (seen.insert(v.get()).second) params.push_back(Param{v, nullptr, 1});
    }
    for (const auto& b : f.params) {
        for (const auto& d : b->shape) {
            pre_order_visit(d, [&](const PrimExpr& e) {
                if (auto* v = e.as<Var>()) {
                    if (seen.insert(v).second) params.push_back(Param{Ref<Var>(v), nullptr, 1});
                }
            });
        }
    }
    FreeSymbols free = collect_free_symbols(f.body);
    for (const auto& v : free.vars) {
        if (!seen.count(v.get())) {
            user_error(f.body->loc) << f.name << ": variable '" << v->name
                                    << "' is used but is neither a parameter, a loop variable, "
                                       "a let nor a dimension of a buffer parameter";
        }
    }
    for (const auto& b : free.buffers) {
        bool is_param = false;
        for (const auto& p : f.params) is_param |= p.same_as(b);
        if (!is_param) {
            user_error(f.body->loc) << f.name << ": buffer '" << b->name
                                    << "' is accessed but is neither a parameter nor allocated";
        }
    }
    llvm::Function* impl = emit_body_function(f.name + ".impl", params, f.body);
    emit_packed_wrapper(f, impl, params);
}

// ---- statements ---------------------------------------------------------------------------------

void CodeGenLLVM::emit_stmt(const tir::Stmt& s) {
    switch (s->kind) {
#define ANVIL_X(name)                                       \
    case tir::StmtKind::name:                               \
        emit_stmt_(static_cast<const tir::name*>(s.get())); \
        return;
        ANVIL_FOR_EACH_STMT(ANVIL_X)
#undef ANVIL_X
    }
}

void CodeGenLLVM::emit_stmt_(const tir::LetStmt* op) {
    llvm::Value* v = emit(op->value);
    v->setName(op->var->name);
    vars_[op->var.get()] = v;
    if (op->value.dtype().is_integer()) var_multiple_[op->var.get()] = known_multiple(op->value);
    emit_stmt(op->body);
}

void CodeGenLLVM::emit_stmt_(const tir::For* op) {
    switch (op->for_kind) {
        case tir::ForKind::Parallel:
            emit_parallel_for(op);
            return;
        case tir::ForKind::ThreadBinding:
            user_error(op->loc) << func_name_ << ": loop '" << op->var->name << "' is bound to "
                                << op->thread_tag << ", which a CPU target cannot run; build "
                                << "for a GPU target or remove the bind";
            return;
        default:
            break;
    }
    llvm::Value* begin = emit(op->min);
    llvm::Value* extent = emit(op->extent);
    emit_serial_loop(op, begin, builder_.CreateAdd(begin, extent));
}

void CodeGenLLVM::emit_serial_loop(const tir::For* op, llvm::Value* begin, llvm::Value* end) {
    const bool is_signed = !op->var->dtype.is_uint();
    llvm::BasicBlock* pre = builder_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "for_" + op->var->name, function_);
    auto* body = llvm::BasicBlock::Create(ctx_, "for_body_" + op->var->name, function_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "for_end_" + op->var->name, function_);
    builder_.CreateBr(header);

    builder_.SetInsertPoint(header);
    llvm::PHINode* i = builder_.CreatePHI(begin->getType(), 2, op->var->name);
    i->addIncoming(begin, pre);
    llvm::Value* more = is_signed ? builder_.CreateICmpSLT(i, end) : builder_.CreateICmpULT(i, end);
    builder_.CreateCondBr(more, body, exit);

    builder_.SetInsertPoint(body);
    vars_[op->var.get()] = i;
    emit_stmt(op->body);
    vars_.erase(op->var.get());
    // The counter stays within [begin, end), so the increment cannot wrap.
    llvm::Value* next =
        builder_.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1), "", !is_signed, is_signed);
    llvm::BranchInst* latch = builder_.CreateBr(header);
    i->addIncoming(next, builder_.GetInsertBlock());

    // Loops the TIR passes meant to vectorize or unroll but left serial keep that intent as a
    // hint to LLVM's loop passes.
    llvm::SmallVector<llvm::Metadata*, 4> md{nullptr};
    md.push_back(llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.mustprogress")));
    auto flag = [&](const char* name) {
        llvm::Metadata* ops[] = {llvm::MDString::get(ctx_, name),
                                 llvm::ConstantAsMetadata::get(builder_.getTrue())};
        md.push_back(llvm::MDNode::get(ctx_, ops));
    };
    if (op->for_kind == tir::ForKind::Vectorized) flag("llvm.loop.vectorize.enable");
    if (op->for_kind == tir::ForKind::Unrolled) {
        md.push_back(llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.full")));
    }
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx_, md);
    loop_id->replaceOperandWith(0, loop_id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);

    builder_.SetInsertPoint(exit);
}

void CodeGenLLVM::emit_stmt_(const tir::Store* op) {
    ANVIL_CHECK(op->indices.size() == 1)
        << func_name_ << ": store to '" << op->buffer->name << "' has " << op->indices.size()
        << " indices; codegen needs flattened storage (run flatten_storage)";
    const BufferInfo& b = buffer_info(op->buffer);
    DataType t = op->value.dtype();
    const PrimExpr& index = op->indices[0];
    ANVIL_CHECK(t.lanes() == index.dtype().lanes())
        << func_name_ << ": store of " << t.str() << " to '" << op->buffer->name
        << "' at an index with " << index.dtype().lanes() << " lanes";
    llvm::Value* value = emit(op->value);
    if (t.is_bool()) value = builder_.CreateZExt(value, storage_type(t));
    const Ramp* ramp = index.as<Ramp>();
    if (t.is_scalar() || (ramp && is_one(ramp->stride))) {
        const PrimExpr& first = ramp ? ramp->base : index;
        llvm::Value* addr = element_address(b, t, index_value(first));
        llvm::Align align = access_align(b, t, index, t.lanes());
        if (int width = masked_width(*op->buffer, t)) {
            // Widened with poison lanes that the mask keeps out of memory.
            std::vector<int> pick = first_lanes(t.lanes());
            pick.resize(static_cast<size_t>(width), -1);
            builder_.CreateMaskedStore(builder_.CreateShuffleVector(value, pick), addr, align,
                                       lane_mask(t.lanes(), width));
            return;
        }
        builder_.CreateAlignedStore(value, addr, align);
        return;
    }
    llvm::Value* addrs = element_address(b, t, index_value(index));
    builder_.CreateMaskedScatter(value, addrs,
                                 access_align(b, t, make_int(DataType::int32(), 1), 1));
}

void CodeGenLLVM::emit_stmt_(const tir::Allocate* op) {
    const Ref<Buffer>& buf = op->buffer;
    DataType elem = buf->dtype;
    const int64_t elem_bytes = elem.is_bool() ? 1 : elem.bytes();
    int64_t const_count = 1;
    bool is_const = true;
    for (const auto& d : buf->shape) {
        if (const int64_t* c = as_const_int(d)) {
            const_count *= *c;
        } else {
            is_const = false;
        }
    }
    const int64_t bytes_needed = const_count * elem_bytes;
    if (is_const && bytes_needed <= kMaxStackAllocBytes &&
        stack_bytes_ + bytes_needed <= kMaxStackBytesPerFunction) {
        stack_bytes_ += bytes_needed;
        // In the entry block, so that a loop around the Allocate does not grow the stack.
        llvm::IRBuilder<> entry_builder(entry_, entry_->getFirstInsertionPt());
        auto* ty = llvm::ArrayType::get(storage_type(elem), static_cast<uint64_t>(const_count));
        llvm::AllocaInst* a = entry_builder.CreateAlloca(ty, nullptr, buf->name);
        a->setAlignment(llvm::Align(kBufferAlign));
        buffers_[buf.get()] = BufferInfo{a, kBufferAlign};
        emit_stmt(op->body);
        buffers_.erase(buf.get());
        return;
    }
    llvm::Value* count = llvm::ConstantInt::get(i64_, 1);
    for (const auto& d : buf->shape) {
        count =
            builder_.CreateMul(count, builder_.CreateIntCast(emit(d), i64_, d.dtype().is_int()));
    }
    llvm::Value* bytes = builder_.CreateMul(count, llvm::ConstantInt::get(i64_, elem_bytes));
    llvm::Value* p =
        builder_.CreateCall(runtime_function("anvil_workspace_alloc"), {bytes}, buf->name);
    auto* fail = llvm::BasicBlock::Create(ctx_, "alloc_fail", function_);
    auto* ok = llvm::BasicBlock::Create(ctx_, "alloc_ok", function_);
    builder_.CreateCondBr(builder_.CreateIsNull(p), fail, ok,
                          llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
    builder_.SetInsertPoint(fail);
    emit_fail(func_name_ + ": could not allocate workspace for '" + buf->name + "'");
    builder_.CreateBr(ok);
    builder_.SetInsertPoint(ok);
    buffers_[buf.get()] = BufferInfo{p, kWorkspaceAlign};
    live_workspace_.push_back(p);
    emit_stmt(op->body);
    live_workspace_.pop_back();
    buffers_.erase(buf.get());
    builder_.CreateCall(runtime_function("anvil_workspace_free"), {p});
}

void CodeGenLLVM::emit_stmt_(const tir::IfThenElse* op) {
    llvm::Value* cond = emit(op->cond);
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "if_then", function_);
    auto* end_bb = llvm::BasicBlock::Create(ctx_, "if_end", function_);
    auto* else_bb =
        op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if_else", function_) : end_bb;
    builder_.CreateCondBr(cond, then_bb, else_bb);
    builder_.SetInsertPoint(then_bb);
    emit_stmt(op->then_case);
    builder_.CreateBr(end_bb);
    if (op->else_case.defined()) {
        builder_.SetInsertPoint(else_bb);
        emit_stmt(op->else_case);
        builder_.CreateBr(end_bb);
    }
    builder_.SetInsertPoint(end_bb);
}

void CodeGenLLVM::emit_stmt_(const tir::Evaluate* op) {
    if (op->value.is<IntImm>() || op->value.is<FloatImm>()) return;
    emit(op->value);
}

void CodeGenLLVM::emit_stmt_(const tir::SeqStmt* op) {
    for (const auto& s : op->seq) emit_stmt(s);
}

void CodeGenLLVM::emit_stmt_(const tir::AssertStmt* op) {
    llvm::Value* cond = emit(op->cond);
    const int lanes = op->cond.dtype().lanes();
    llvm::Value* holds = lanes > 1 ? builder_.CreateAndReduce(cond) : cond;
    auto* fail = llvm::BasicBlock::Create(ctx_, "assert_fail", function_);
    auto* ok = llvm::BasicBlock::Create(ctx_, "assert_ok", function_);
    builder_.CreateCondBr(holds, ok, fail, llvm::MDBuilder(ctx_).createLikelyBranchWeights());
    builder_.SetInsertPoint(fail);
    if (op->message_args.empty()) {
        emit_fail(op->message);
    } else {
        // A vector argument shows its value at the first failing lane: the lowest set bit of
        // the failing lanes' mask.
        llvm::Value* lane = nullptr;
        if (lanes > 1) {
            llvm::Type* mask_ty = llvm::IntegerType::get(ctx_, static_cast<unsigned>(lanes));
            llvm::Value* failing = builder_.CreateBitCast(builder_.CreateNot(cond), mask_ty);
            lane = builder_.CreateIntrinsic(llvm::Intrinsic::cttz, {mask_ty},
                                            {failing, builder_.getTrue()});
        }
        std::vector<llvm::Value*> values;
        for (const auto& a : op->message_args) {
            llvm::Value* v = emit(a);
            if (a.dtype().is_vector()) v = builder_.CreateExtractElement(v, lane);
            values.push_back(builder_.CreateIntCast(v, i64_, a.dtype().is_int()));
        }
        emit_fail_formatted(op->message, values);
    }
    builder_.CreateBr(ok);
    builder_.SetInsertPoint(ok);
    if (op->body.defined()) emit_stmt(op->body);
}

}  // namespace anvil::codegen
