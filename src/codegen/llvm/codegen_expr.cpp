// Expressions: arithmetic, comparisons, casts, loads, vectors and calls (the intrinsic math and
// bit functions are in codegen_intrinsics.cpp).
#include <llvm/IR/Intrinsics.h>

#include <numeric>

#include "codegen/llvm/codegen_llvm.h"
#include "ir/intrinsics.h"
#include "support/error.h"

namespace anvil::codegen {

llvm::Type* CodeGenLLVM::llvm_type(DataType t) {
    llvm::Type* scalar = nullptr;
    switch (t.code()) {
        case DataType::Code::Int:
        case DataType::Code::UInt:
            scalar = llvm::Type::getIntNTy(ctx_, t.bits());
            break;
        case DataType::Code::Bool:
            scalar = llvm::Type::getInt1Ty(ctx_);
            break;
        case DataType::Code::BFloat:
            scalar = llvm::Type::getInt16Ty(ctx_);
            break;
        case DataType::Code::Handle:
            if (t.is_void()) return llvm::Type::getVoidTy(ctx_);
            scalar = ptr_;
            break;
        case DataType::Code::Float:
            if (t.bits() == 16)
                scalar = llvm::Type::getHalfTy(ctx_);
            else if (t.bits() == 32)
                scalar = llvm::Type::getFloatTy(ctx_);
            else if (t.bits() == 64)
                scalar = llvm::Type::getDoubleTy(ctx_);
            else
                internal_error() << "no LLVM type for " << t.str();
            break;
        case DataType::Code::String:
            internal_error() << "a kernel handles strings; only executor ops may";
    }
    if (t.is_vector()) return llvm::FixedVectorType::get(scalar, t.lanes());
    return scalar;
}

llvm::Type* CodeGenLLVM::storage_type(DataType t) {
    if (t.is_bool()) {
        llvm::Type* i8 = llvm::Type::getInt8Ty(ctx_);
        return t.is_vector() ? llvm::FixedVectorType::get(i8, t.lanes()) : i8;
    }
    return llvm_type(t);
}

llvm::Value* CodeGenLLVM::emit(const PrimExpr& e) {
    ANVIL_CHECK(e.defined()) << "undefined expression in " << func_name_;
    switch (e->kind) {
#define ANVIL_X(name)    \
    case ExprKind::name: \
        return emit_(static_cast<const name*>(e.get()));
        ANVIL_FOR_EACH_EXPR(ANVIL_X)
#undef ANVIL_X
    }
    ANVIL_UNREACHABLE();
}

// ---- constants and variables ------------------------------------------------------------------

llvm::Value* CodeGenLLVM::emit_(const IntImm* op) {
    return llvm::ConstantInt::get(llvm_type(op->dtype), static_cast<uint64_t>(op->value),
                                  op->dtype.is_int());
}

llvm::Value* CodeGenLLVM::emit_(const FloatImm* op) {
    if (op->dtype.is_bfloat()) {
        llvm::Value* f = llvm::ConstantFP::get(llvm::Type::getFloatTy(ctx_), op->value);
        return f32_to_bf16(f);  // folded by IRBuilder
    }
    return llvm::ConstantFP::get(llvm_type(op->dtype), op->value);
}

llvm::Value* CodeGenLLVM::emit_(const Var* op) {
    auto it = vars_.find(op);
    if (it == vars_.end()) {
        internal_error() << func_name_ << ": variable '" << op->name
                         << "' is used but not bound (not a parameter, loop variable or let)";
    }
    return it->second;
}

// ---- arithmetic ---------------------------------------------------------------------------

llvm::Value* CodeGenLLVM::to_compute_float(DataType t, llvm::Value* v) {
    if (t.is_bfloat()) return bf16_to_f32(v);
    return v;
}

llvm::Value* CodeGenLLVM::from_compute_float(DataType t, llvm::Value* v) {
    if (t.is_bfloat()) return f32_to_bf16(v);
    return v;
}

namespace {

// Float multiply-add may contract into FMA; nothing else is relaxed.
llvm::FastMathFlags contract_only() {
    llvm::FastMathFlags f;
    f.setAllowContract(true);
    return f;
}

}  // namespace

// + - *: floats compute (through float32 for half types) with contraction allowed; bools are
// arithmetic modulo 2; signed index arithmetic is marked no-signed-wrap so loops analyze well.
llvm::Value* CodeGenLLVM::emit_arith(const BinaryExpr* op, llvm::Instruction::BinaryOps float_op,
                                     llvm::Instruction::BinaryOps int_op,
                                     llvm::Instruction::BinaryOps bool_op) {
    DataType t = op->dtype;
    llvm::Value* a = emit(op->a);
    llvm::Value* b = emit(op->b);
    if (t.is_floating()) {
        llvm::IRBuilder<>::FastMathFlagGuard guard(builder_);
        builder_.setFastMathFlags(contract_only());
        return from_compute_float(
            t, builder_.CreateBinOp(float_op, to_compute_float(t, a), to_compute_float(t, b)));
    }
    if (t.is_bool()) return builder_.CreateBinOp(bool_op, a, b);
    llvm::Value* v = builder_.CreateBinOp(int_op, a, b);
    if (auto* inst = llvm::dyn_cast<llvm::BinaryOperator>(v); inst && in_index_ && t.is_int()) {
        inst->setHasNoSignedWrap(true);
    }
    return v;
}

llvm::Value* CodeGenLLVM::emit_(const Add* op) {
    // acc + dot_u8s8(a, b): one vpdpbusd where the target has it; acc + dot_bf16(a, b): one
    // vdpbf16ps.
    for (const auto& [acc, other] : {std::pair{op->a, op->b}, std::pair{op->b, op->a}}) {
        const Call* dot = other.as<Call>();
        if (dot && dot->name == intrin::kDotU8S8 &&
            vpdpbusd_for(dot->dtype.lanes()) != llvm::Intrinsic::not_intrinsic) {
            return emit_dot_u8s8(dot, emit(acc));
        }
        if (dot && dot->name == intrin::kDotBF16 &&
            vdpbf16ps_for(dot->dtype.lanes()) != llvm::Intrinsic::not_intrinsic) {
            return emit_dot_bf16(dot, emit(acc));
        }
    }
    return emit_arith(op, llvm::Instruction::FAdd, llvm::Instruction::Add, llvm::Instruction::Xor);
}
llvm::Value* CodeGenLLVM::emit_(const Sub* op) {
    return emit_arith(op, llvm::Instruction::FSub, llvm::Instruction::Sub, llvm::Instruction::Xor);
}
llvm::Value* CodeGenLLVM::emit_(const Mul* op) {
    return emit_arith(op, llvm::Instruction::FMul, llvm::Instruction::Mul, llvm::Instruction::And);
}

llvm::Value* CodeGenLLVM::emit_(const Div* op) {
    DataType t = op->dtype;
    llvm::Value* a = emit(op->a);
    llvm::Value* b = emit(op->b);
    if (t.is_floating()) {
        return from_compute_float(
            t, builder_.CreateFDiv(to_compute_float(t, a), to_compute_float(t, b)));
    }
    return t.is_int() ? builder_.CreateSDiv(a, b) : builder_.CreateUDiv(a, b);
}

llvm::Value* CodeGenLLVM::emit_(const Mod* op) {
    DataType t = op->dtype;
    llvm::Value* a = emit(op->a);
    llvm::Value* b = emit(op->b);
    if (t.is_floating()) {
        return from_compute_float(
            t, builder_.CreateFRem(to_compute_float(t, a), to_compute_float(t, b)));
    }
    return t.is_int() ? builder_.CreateSRem(a, b) : builder_.CreateURem(a, b);
}

// Floor division rounds toward negative infinity: the truncated quotient is one too large
// exactly when the remainder is non-zero and its sign differs from the divisor's.
llvm::Value* CodeGenLLVM::emit_floor_div_mod(const BinaryExpr* op, bool is_div) {
    DataType t = op->dtype;
    llvm::Value* a = emit(op->a);
    llvm::Value* b = emit(op->b);
    if (t.is_floating()) {
        llvm::Value* fa = to_compute_float(t, a);
        llvm::Value* fb = to_compute_float(t, b);
        llvm::Value* q =
            builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(fa, fb));
        if (is_div) return from_compute_float(t, q);
        return from_compute_float(t, builder_.CreateFSub(fa, builder_.CreateFMul(q, fb)));
    }
    if (!t.is_int()) return is_div ? builder_.CreateUDiv(a, b) : builder_.CreateURem(a, b);
    // Constant positive divisors are the common index case: LLVM folds the sign test below.
    llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
    llvm::Value* q = builder_.CreateSDiv(a, b);
    llvm::Value* r = builder_.CreateSRem(a, b);
    llvm::Value* r_nonzero = builder_.CreateICmpNE(r, zero);
    llvm::Value* signs_differ =
        builder_.CreateICmpSLT(builder_.CreateXor(r, b), zero);  // sign(r) != sign(b)
    llvm::Value* fix = builder_.CreateAnd(r_nonzero, signs_differ);
    if (is_div) return builder_.CreateSub(q, builder_.CreateZExt(fix, q->getType()));
    return builder_.CreateSelect(fix, builder_.CreateAdd(r, b), r);
}

llvm::Value* CodeGenLLVM::emit_(const FloorDiv* op) {
    return emit_floor_div_mod(op, true);
}
llvm::Value* CodeGenLLVM::emit_(const FloorMod* op) {
    return emit_floor_div_mod(op, false);
}

llvm::Value* CodeGenLLVM::emit_(const Min* op) {
    DataType t = op->dtype;
    llvm::Value* a = emit(op->a);
    llvm::Value* b = emit(op->b);
    if (t.is_floating()) {
        return from_compute_float(
            t, builder_.CreateMinNum(to_compute_float(t, a), to_compute_float(t, b)));
    }
    if (t.is_bool()) return builder_.CreateAnd(a, b);
    auto id = t.is_int() ? llvm::Intrinsic::smin : llvm::Intrinsic::umin;
    return builder_.CreateBinaryIntrinsic(id, a, b);
}

llvm::Value* CodeGenLLVM::emit_(const Max* op) {
    DataType t = op->dtype;
    llvm::Value* a = emit(op->a);
    llvm::Value* b = emit(op->b);
    if (t.is_floating()) {
        return from_compute_float(
            t, builder_.CreateMaxNum(to_compute_float(t, a), to_compute_float(t, b)));
    }
    if (t.is_bool()) return builder_.CreateOr(a, b);
    auto id = t.is_int() ? llvm::Intrinsic::smax : llvm::Intrinsic::umax;
    return builder_.CreateBinaryIntrinsic(id, a, b);
}

// ---- comparisons and logic ------------------------------------------------------------------

namespace {

struct Predicates {
    llvm::CmpInst::Predicate sint, uint, flt;
};

Predicates predicates_of(ExprKind k) {
    using P = llvm::CmpInst;
    switch (k) {
        case ExprKind::EQ:
            return {P::ICMP_EQ, P::ICMP_EQ, P::FCMP_OEQ};
        case ExprKind::NE:
            return {P::ICMP_NE, P::ICMP_NE, P::FCMP_UNE};
        case ExprKind::LT:
            return {P::ICMP_SLT, P::ICMP_ULT, P::FCMP_OLT};
        case ExprKind::LE:
            return {P::ICMP_SLE, P::ICMP_ULE, P::FCMP_OLE};
        case ExprKind::GT:
            return {P::ICMP_SGT, P::ICMP_UGT, P::FCMP_OGT};
        case ExprKind::GE:
            return {P::ICMP_SGE, P::ICMP_UGE, P::FCMP_OGE};
        default:
            ANVIL_UNREACHABLE();
    }
}

}  // namespace

#define ANVIL_COMPARE(name)                                                                    \
    llvm::Value* CodeGenLLVM::emit_(const name* op) {                                          \
        DataType t = op->a.dtype();                                                            \
        llvm::Value* a = emit(op->a);                                                          \
        llvm::Value* b = emit(op->b);                                                          \
        Predicates p = predicates_of(ExprKind::name);                                          \
        if (t.is_floating()) {                                                                 \
            return builder_.CreateFCmp(p.flt, to_compute_float(t, a), to_compute_float(t, b)); \
        }                                                                                      \
        if (t.is_handle()) {                                                                   \
            a = builder_.CreatePtrToInt(a, i64_);                                              \
            b = builder_.CreatePtrToInt(b, i64_);                                              \
        }                                                                                      \
        return builder_.CreateICmp(t.is_int() ? p.sint : p.uint, a, b);                        \
    }
ANVIL_COMPARE(EQ)
ANVIL_COMPARE(NE)
ANVIL_COMPARE(LT)
ANVIL_COMPARE(LE)
ANVIL_COMPARE(GT)
ANVIL_COMPARE(GE)
#undef ANVIL_COMPARE

llvm::Value* CodeGenLLVM::emit_(const And* op) {
    return builder_.CreateAnd(emit(op->a), emit(op->b));
}
llvm::Value* CodeGenLLVM::emit_(const Or* op) {
    return builder_.CreateOr(emit(op->a), emit(op->b));
}
llvm::Value* CodeGenLLVM::emit_(const Not* op) {
    return builder_.CreateNot(emit(op->a));
}

llvm::Value* CodeGenLLVM::emit_(const Select* op) {
    llvm::Value* c = emit(op->cond);
    llvm::Value* t = emit(op->true_value);
    llvm::Value* f = emit(op->false_value);
    return builder_.CreateSelect(c, t, f);
}

// ---- casts -----------------------------------------------------------------------------------

// bfloat16 is the upper half of a float32.
llvm::Value* CodeGenLLVM::bf16_to_f32(llvm::Value* v) {
    llvm::Type* i32 = i32_;
    llvm::Type* f32 = llvm::Type::getFloatTy(ctx_);
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
        i32 = llvm::FixedVectorType::get(i32_, vt->getNumElements());
        f32 = llvm::FixedVectorType::get(f32, vt->getNumElements());
    }
    llvm::Value* wide = builder_.CreateShl(builder_.CreateZExt(v, i32), 16);
    return builder_.CreateBitCast(wide, f32);
}

// Round to nearest even on the dropped 16 bits; NaN stays a (quiet) NaN.
llvm::Value* CodeGenLLVM::f32_to_bf16(llvm::Value* v) {
    llvm::Type* i32 = i32_;
    llvm::Type* i16 = llvm::Type::getInt16Ty(ctx_);
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
        i32 = llvm::FixedVectorType::get(i32_, vt->getNumElements());
        i16 = llvm::FixedVectorType::get(i16, vt->getNumElements());
    }
    llvm::Value* bits = builder_.CreateBitCast(v, i32);
    llvm::Value* lsb =
        builder_.CreateAnd(builder_.CreateLShr(bits, 16), llvm::ConstantInt::get(i32, 1));
    llvm::Value* rounded =
        builder_.CreateAdd(bits, builder_.CreateAdd(llvm::ConstantInt::get(i32, 0x7fff), lsb));
    llvm::Value* result = builder_.CreateTrunc(builder_.CreateLShr(rounded, 16), i16);
    llvm::Value* is_nan = builder_.CreateFCmpUNO(v, v);
    return builder_.CreateSelect(is_nan, llvm::ConstantInt::get(i16, 0x7fc0), result);
}

llvm::Value* CodeGenLLVM::emit_cast(DataType from, DataType to, llvm::Value* v) {
    if (from == to) return v;
    if (from.is_bfloat()) {
        from = DataType::float32().with_lanes(from.lanes());
        v = bf16_to_f32(v);
        if (from == to) return v;
    }
    if (to.is_bfloat()) {
        DataType f32 = DataType::float32().with_lanes(to.lanes());
        return f32_to_bf16(emit_cast(from, f32, v));
    }
    llvm::Type* target = llvm_type(to);
    if (to.is_bool()) {
        if (from.is_float()) {
            return builder_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
        }
        if (from.is_handle()) return builder_.CreateIsNotNull(v);
        return builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    if (to.is_handle() || from.is_handle()) {
        if (to.is_handle() && from.is_handle()) return v;
        return to.is_handle() ? builder_.CreateIntToPtr(v, target)
                              : builder_.CreatePtrToInt(v, target);
    }
    const bool from_signed = from.is_int();
    if (from.is_float() && to.is_float()) return builder_.CreateFPCast(v, target);
    if (from.is_float()) {
        // Integers narrower than 32 bits, and uint32, convert through a wider signed integer and
        // wrap, as C on x86-64 does (and so PyTorch and NumPy there): -8.5 -> uint8 248, on
        // every target alike.
        // A direct conversion out of the narrow type's range would be poison, which LLVM
        // computes differently in vector and scalar code.
        const int wide = to.bits() < 32 ? 32 : to.bits() == 32 && !to.is_int() ? 64 : 0;
        if (wide) {
            llvm::Type* wide_type = llvm_type(DataType::int_(wide).with_lanes(to.lanes()));
            return builder_.CreateTrunc(builder_.CreateFPToSI(v, wide_type), target);
        }
        return to.is_int() ? builder_.CreateFPToSI(v, target) : builder_.CreateFPToUI(v, target);
    }
    if (to.is_float()) {
        return from_signed ? builder_.CreateSIToFP(v, target) : builder_.CreateUIToFP(v, target);
    }
    return builder_.CreateIntCast(v, target, from_signed);  // bool zero-extends
}

llvm::Value* CodeGenLLVM::emit_(const Cast* op) {
    return emit_cast(op->value.dtype(), op->dtype, emit(op->value));
}

// ---- vectors ----------------------------------------------------------------------------------

llvm::Value* CodeGenLLVM::emit_(const Ramp* op) {
    DataType t = op->dtype;
    llvm::Value* base = builder_.CreateVectorSplat(op->lanes, emit(op->base));
    llvm::Value* stride = builder_.CreateVectorSplat(op->lanes, emit(op->stride));
    std::vector<llvm::Constant*> steps;
    for (int i = 0; i < op->lanes; ++i) {
        steps.push_back(t.is_floating() ? llvm::ConstantFP::get(llvm_type(t.element_of()), i)
                                        : llvm::ConstantInt::get(llvm_type(t.element_of()), i));
    }
    llvm::Value* iota = llvm::ConstantVector::get(steps);
    if (t.is_floating()) {
        return builder_.CreateFAdd(base, builder_.CreateFMul(stride, iota));
    }
    const bool nsw = in_index_ && t.is_int();
    return builder_.CreateAdd(base, builder_.CreateMul(stride, iota, "", false, nsw), "", false,
                              nsw);
}

llvm::Value* CodeGenLLVM::emit_(const Broadcast* op) {
    return builder_.CreateVectorSplat(op->lanes, emit(op->value));
}

// ---- memory -------------------------------------------------------------------------------------

const CodeGenLLVM::BufferInfo& CodeGenLLVM::buffer_info(const Ref<Buffer>& b) {
    auto it = buffers_.find(b.get());
    if (it == buffers_.end()) {
        internal_error() << func_name_ << ": buffer '" << b->name
                         << "' is accessed but is neither a parameter nor allocated";
    }
    return it->second;
}

// The largest power of two (capped at 2^30) known to divide an integer expression; alignment
// only cares about powers of two, and capping keeps the products from overflowing.
int64_t CodeGenLLVM::known_multiple(const PrimExpr& e) {
    constexpr int64_t kCap = int64_t{1} << 30;
    if (auto* imm = e.as<IntImm>()) {
        if (imm->value == 0) return kCap;
        const uint64_t v = static_cast<uint64_t>(imm->value);
        return std::min<int64_t>(static_cast<int64_t>(v & (~v + 1)), kCap);
    }
    if (auto* v = e.as<Var>()) {
        auto it = var_multiple_.find(v);
        return it == var_multiple_.end() ? 1 : it->second;
    }
    if (auto* m = e.as<Mul>()) return std::min(known_multiple(m->a) * known_multiple(m->b), kCap);
    if (auto* a = e.as<Add>()) return std::min(known_multiple(a->a), known_multiple(a->b));
    if (auto* s = e.as<Sub>()) return std::min(known_multiple(s->a), known_multiple(s->b));
    if (auto* r = e.as<Ramp>()) return known_multiple(r->base);
    if (auto* c = e.as<Cast>()) {
        if (c->value.dtype().is_integer() && c->dtype.bits() >= c->value.dtype().bits()) {
            return known_multiple(c->value);
        }
    }
    return 1;
}

llvm::Align CodeGenLLVM::access_align(const BufferInfo& b, DataType elem, const PrimExpr& index,
                                      int lanes) {
    int64_t elem_bytes = elem.is_bool() ? 1 : elem.bytes();
    int64_t offset_multiple = known_multiple(index) * elem_bytes;
    int64_t align = std::gcd(b.align, offset_multiple);
    // Never claim more than the access spans; then round down to a power of two.
    align = std::max<int64_t>(std::min<int64_t>(align, elem_bytes * lanes), 1);
    while (align & (align - 1)) align &= align - 1;
    return llvm::Align(static_cast<uint64_t>(align));
}

llvm::Value* CodeGenLLVM::index_value(const PrimExpr& e) {
    bool saved = in_index_;
    in_index_ = true;
    llvm::Value* v = emit(e);
    in_index_ = saved;
    llvm::Type* target = i64_;
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
        target = llvm::FixedVectorType::get(i64_, vt->getNumElements());
    }
    return builder_.CreateIntCast(v, target, e.dtype().is_int());
}

llvm::Value* CodeGenLLVM::element_address(const BufferInfo& b, DataType elem, llvm::Value* index,
                                          bool inbounds) {
    llvm::Type* t = storage_type(elem.element_of());
    return inbounds ? builder_.CreateInBoundsGEP(t, b.ptr, index)
                    : builder_.CreateGEP(t, b.ptr, index);
}

llvm::Value* CodeGenLLVM::emit_(const Load* op) {
    ANVIL_CHECK(op->indices.size() == 1)
        << func_name_ << ": load from '" << op->buffer->name << "' has " << op->indices.size()
        << " indices; codegen needs flattened storage (run flatten_storage)";
    const BufferInfo& b = buffer_info(op->buffer);
    DataType t = op->dtype;
    const PrimExpr& index = op->indices[0];
    llvm::Value* value = nullptr;
    const Ramp* ramp = index.as<Ramp>();
    if (t.is_scalar() || (ramp && is_one(ramp->stride))) {
        // Contiguous: one (vector) load at the first element.
        const PrimExpr& first = ramp ? ramp->base : index;
        llvm::Value* addr = element_address(b, t, index_value(first));
        llvm::Align align = access_align(b, t, index, t.lanes());
        if (int width = masked_width(*op->buffer, t)) {
            llvm::Value* wide = builder_.CreateMaskedLoad(
                llvm::FixedVectorType::get(storage_type(t.element_of()), width), addr, align,
                lane_mask(t.lanes(), width));
            value = builder_.CreateShuffleVector(wide, first_lanes(t.lanes()));
        } else {
            value = builder_.CreateAlignedLoad(storage_type(t), addr, align);
        }
    } else if (const int64_t* stride = ramp ? as_const_int(ramp->stride) : nullptr;
               stride && *stride >= 2 && *stride <= kMaxShuffledStride) {
        // A small constant stride (a stride-2 convolution's input row): one contiguous load of
        // the span the lanes cover, then a shuffle picking every stride-th element. Much cheaper
        // than a gather; the mask keeps the load inside the span.
        const int lanes = t.lanes();
        const int s = static_cast<int>(*stride);
        const int span = (lanes - 1) * s + 1;
        auto* wide_ty = llvm::FixedVectorType::get(storage_type(t.element_of()), lanes * s);
        llvm::Value* addr = element_address(b, t, index_value(ramp->base));
        llvm::Value* wide =
            builder_.CreateMaskedLoad(wide_ty, addr, access_align(b, t.element_of(), ramp->base, 1),
                                      lane_mask(span, lanes * s));
        std::vector<int> pick;
        for (int k = 0; k < lanes; ++k) pick.push_back(k * s);
        value = builder_.CreateShuffleVector(wide, pick);
    } else {
        llvm::Value* addrs = element_address(b, t, index_value(index));
        llvm::Align align = access_align(b, t, PrimExpr(make_int(DataType::int32(), 1)), 1);
        value = builder_.CreateMaskedGather(storage_type(t), addrs, align);
    }
    if (t.is_bool())
        return builder_.CreateICmpNE(value, llvm::Constant::getNullValue(value->getType()));
    return value;
}

// With AVX-512, a contiguous access to memory of an odd lane count (a row of 7 or 9) is one
// masked access of the next power of two (LLVM would split it into pieces of 4, 2 and 1). 0 when
// not.
int CodeGenLLVM::masked_width(const Buffer& buffer, DataType t) const {
    // Register-sized local buffers are promoted to registers, which masked accesses would stop.
    if (buffer.scope == "local") return 0;
    const int lanes = t.lanes();
    if (lanes <= 1 || (lanes & (lanes - 1)) == 0 || target_.vector_bits() < 512) return 0;
    if (t.is_bool() || t.bits() < 32) return 0;  // byte and word masks need AVX-512BW
    int width = 1;
    while (width < lanes) width *= 2;
    return width;
}

llvm::Value* CodeGenLLVM::lane_mask(int lanes, int width) {
    std::vector<llvm::Constant*> mask;
    for (int k = 0; k < width; ++k) mask.push_back(builder_.getInt1(k < lanes));
    return llvm::ConstantVector::get(mask);
}

std::vector<int> CodeGenLLVM::first_lanes(int lanes) {
    std::vector<int> pick(static_cast<size_t>(lanes));
    for (int k = 0; k < lanes; ++k) pick[static_cast<size_t>(k)] = k;
    return pick;
}

// if_then_else(cond, load, other) with a vector cond: a load in the other branch reads the other
// lanes only (vectorize_loops left it unclamped). Masked loads are only issued for vectors where
// the guard is mixed: a vector wholly on one side (most of a concatenation's, a padded row's
// interior) loads plainly. Besides being cheaper, that keeps masked-off lanes from pointing far
// outside a buffer, which CPUs serve with a slow fault-suppression assist when the page is not
// mapped. `needed` (null: every lane) are the lanes an enclosing guard leaves to this one: a
// nested guard (a concatenation's third input onwards) must not read the lanes the enclosing
// one took, which may lie before its buffer.
llvm::Value* CodeGenLLVM::emit_guarded_load(const Call* op, llvm::Value* cond,
                                            llvm::Value* needed) {
    const Load* guarded = op->args[1].as<Load>();
    if (needed) {
        llvm::Value* then_lanes = builder_.CreateAnd(needed, cond);
        llvm::Value* else_lanes = builder_.CreateAnd(needed, builder_.CreateNot(cond));
        return emit_masked_load(guarded, then_lanes, emit_branch_lanes(op->args[2], else_lanes));
    }
    auto* all_bb = llvm::BasicBlock::Create(ctx_, "guard_all", function_);
    auto* check_none_bb = llvm::BasicBlock::Create(ctx_, "guard_check_none", function_);
    auto* none_bb = llvm::BasicBlock::Create(ctx_, "guard_none", function_);
    auto* mixed_bb = llvm::BasicBlock::Create(ctx_, "guard_mixed", function_);
    auto* end_bb = llvm::BasicBlock::Create(ctx_, "guard_end", function_);
    builder_.CreateCondBr(builder_.CreateAndReduce(cond), all_bb, check_none_bb);
    builder_.SetInsertPoint(check_none_bb);
    builder_.CreateCondBr(builder_.CreateOrReduce(cond), mixed_bb, none_bb);

    return join_arms(end_bb, {{all_bb, [&] { return emit(op->args[1]); }},
                              {none_bb, [&] { return emit(op->args[2]); }},
                              {mixed_bb, [&] {
                                   llvm::Value* otherwise =
                                       emit_branch_lanes(op->args[2], builder_.CreateNot(cond));
                                   return emit_masked_load(guarded, cond, otherwise);
                               }}});
}

llvm::Value* CodeGenLLVM::join_arms(llvm::BasicBlock* join, const std::vector<Arm>& arms) {
    std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>> values;
    for (const auto& [block, emit_value] : arms) {
        builder_.SetInsertPoint(block);
        llvm::Value* v = emit_value();
        values.emplace_back(v, builder_.GetInsertBlock());  // the arm may have added blocks
        builder_.CreateBr(join);
    }
    builder_.SetInsertPoint(join);
    llvm::PHINode* phi =
        builder_.CreatePHI(values[0].first->getType(), static_cast<unsigned>(values.size()));
    for (const auto& [v, block] : values) phi->addIncoming(v, block);
    return phi;
}

// The other branch of a guarded load, read only in the lanes of `lanes` where it is a load or a
// guarded load itself; any other expression is safe in every lane (vectorize_loops).
llvm::Value* CodeGenLLVM::emit_branch_lanes(const PrimExpr& e, llvm::Value* lanes) {
    if (const Load* load = e.as<Load>(); load && load->dtype.is_vector()) {
        return emit_masked_load(load, lanes, llvm::Constant::getNullValue(llvm_type(load->dtype)));
    }
    const Call* nested = e.as<Call>();
    if (nested && nested->name == intrin::kIfThenElse && nested->args[0].dtype().is_vector()) {
        const Load* load = nested->args[1].as<Load>();
        if (load && load->dtype.is_vector()) {
            return emit_guarded_load(nested, emit(nested->args[0]), lanes);
        }
    }
    return emit(e);
}

// The lanes of a vector load where `mask` holds, `otherwise` elsewhere; masked-off lanes do not
// touch memory (they may lie outside the buffer).
llvm::Value* CodeGenLLVM::emit_masked_load(const Load* op, llvm::Value* mask,
                                           llvm::Value* otherwise) {
    ANVIL_CHECK(op->indices.size() == 1) << func_name_ << ": load from '" << op->buffer->name
                                         << "' needs flattened storage (run flatten_storage)";
    const BufferInfo& b = buffer_info(op->buffer);
    DataType t = op->dtype;
    const PrimExpr& index = op->indices[0];
    llvm::Type* ty = storage_type(t);
    if (!otherwise->getType()->isVectorTy()) {
        otherwise = builder_.CreateVectorSplat(t.lanes(), otherwise);
    }
    if (t.is_bool()) otherwise = builder_.CreateZExt(otherwise, ty);
    llvm::Value* value = nullptr;
    const Ramp* ramp = index.as<Ramp>();
    const int64_t* stride = ramp ? as_const_int(ramp->stride) : nullptr;
    if (ramp && is_one(ramp->stride)) {
        llvm::Value* addr = element_address(b, t, index_value(ramp->base), false);
        value = builder_.CreateMaskedLoad(ty, addr, access_align(b, t, index, t.lanes()), mask,
                                          otherwise);
    } else if (stride && *stride >= 2 && *stride <= kMaxShuffledStride) {
        // As an unguarded strided load (a contiguous load and a shuffle), the mask spread to
        // the elements the lanes pick: wide lane k * stride takes lane k's guard, the lanes in
        // between are off.
        const int lanes = t.lanes(), s = static_cast<int>(*stride);
        std::vector<int> spread;
        for (int k = 0; k < lanes * s; ++k) spread.push_back(k % s == 0 ? k / s : lanes);
        llvm::Value* wide_mask = builder_.CreateShuffleVector(
            mask, llvm::Constant::getNullValue(mask->getType()), spread);
        llvm::Value* addr = element_address(b, t, index_value(ramp->base), false);
        llvm::Value* wide = builder_.CreateMaskedLoad(
            llvm::FixedVectorType::get(storage_type(t.element_of()), lanes * s), addr,
            access_align(b, t.element_of(), ramp->base, 1), wide_mask);
        std::vector<int> pick;
        for (int k = 0; k < lanes; ++k) pick.push_back(k * s);
        value = builder_.CreateSelect(mask, builder_.CreateShuffleVector(wide, pick), otherwise);
    } else {
        llvm::Value* addrs = element_address(b, t, index_value(index), false);
        llvm::Align align = access_align(b, t, PrimExpr(make_int(DataType::int32(), 1)), 1);
        value = builder_.CreateMaskedGather(ty, addrs, align, mask, otherwise);
    }
    if (t.is_bool())
        return builder_.CreateICmpNE(value, llvm::Constant::getNullValue(value->getType()));
    return value;
}

// ---- calls --------------------------------------------------------------------------------------

llvm::Value* CodeGenLLVM::emit_(const Call* op) {
    if (op->name == intrin::kReinterpret) {
        ANVIL_CHECK(op->args.size() == 1) << "reinterpret takes one argument";
        llvm::Value* v = emit(op->args[0]);
        DataType from = op->args[0].dtype();
        if (from.is_handle() || op->dtype.is_handle()) return emit_cast(from, op->dtype, v);
        return builder_.CreateBitCast(v, llvm_type(op->dtype));
    }
    if (op->name == intrin::kLikely) {
        ANVIL_CHECK(op->args.size() == 1) << "likely takes one argument";
        llvm::Value* c = emit(op->args[0]);
        if (!c->getType()->isIntegerTy(1)) return c;  // llvm.expect is for scalars here
        return builder_.CreateIntrinsic(llvm::Intrinsic::expect, {c->getType()},
                                        {c, builder_.getTrue()});
    }
    if (op->name == intrin::kIfThenElse) return emit_if_then_else(op);
    if (op->name == intrin::kPrefetch) return emit_prefetch(op);
    if (intrin::is_amx(op->name)) return emit_amx(op);
    if (intrin::is_math(op->name)) return emit_call_intrinsic(op);
    if (op->name == intrin::kDotU8S8) {
        return emit_dot_u8s8(op, llvm::Constant::getNullValue(llvm_type(op->dtype)));
    }
    if (op->name == intrin::kDotBF16) {
        return emit_dot_bf16(op, llvm::Constant::getNullValue(llvm_type(op->dtype)));
    }
    if (intrin::is_bitwise(op->name)) return emit_bitwise(op);
    if (intrin::is_fixed_point_multiply(op->name)) return emit_fixed_point_multiply(op);
    // An external pure function, called per lane.
    std::vector<llvm::Type*> arg_types;
    for (const auto& a : op->args) arg_types.push_back(llvm_type(a.dtype().element_of()));
    auto* fty = llvm::FunctionType::get(llvm_type(op->dtype.element_of()), arg_types, false);
    llvm::FunctionCallee callee = module_->getOrInsertFunction(op->name, fty);
    std::vector<llvm::Value*> args;
    for (const auto& a : op->args) args.push_back(emit(a));
    if (op->dtype.is_scalar()) return builder_.CreateCall(callee, args);
    llvm::Value* out = llvm::PoisonValue::get(llvm_type(op->dtype));
    for (int lane = 0; lane < op->dtype.lanes(); ++lane) {
        std::vector<llvm::Value*> lane_args;
        for (size_t i = 0; i < args.size(); ++i) {
            lane_args.push_back(op->args[i].dtype().is_vector()
                                    ? builder_.CreateExtractElement(args[i], lane)
                                    : args[i]);
        }
        out = builder_.CreateInsertElement(out, builder_.CreateCall(callee, lane_args), lane);
    }
    return out;
}

llvm::Value* CodeGenLLVM::emit_prefetch(const Call* op) {
    const Load* load = op->args.size() == 1 ? op->args[0].as<Load>() : nullptr;
    ANVIL_CHECK(load && load->indices.size() == 1 && load->dtype.is_scalar())
        << func_name_ << ": prefetch takes one scalar load of a flattened buffer";
    const BufferInfo& b = buffer_info(load->buffer);
    llvm::Value* addr =
        element_address(b, load->dtype, index_value(load->indices[0]), /*inbounds=*/false);
    // Read (0), keep in all cache levels (locality 3), data cache (1).
    builder_.CreateIntrinsic(
        llvm::Intrinsic::prefetch, {addr->getType()},
        {addr, builder_.getInt32(0), builder_.getInt32(3), builder_.getInt32(1)});
    return builder_.getInt32(0);
}

// if_then_else evaluates only the chosen branch, which may read memory valid only under its
// condition: a scalar condition branches (whatever the type of the values). A vector condition
// masks a load in the then-branch (emit_guarded_load); any other vector branches are safe to
// evaluate in every lane (vectorize_loops clamps their loads), so a select is exact.
llvm::Value* CodeGenLLVM::emit_if_then_else(const Call* op) {
    ANVIL_CHECK(op->args.size() == 3) << "if_then_else takes three arguments";
    llvm::Value* cond = emit(op->args[0]);
    const Load* guarded = op->args[1].as<Load>();
    if (op->args[0].dtype().is_vector() && guarded && guarded->dtype.is_vector()) {
        return emit_guarded_load(op, cond);
    }
    if (op->args[0].dtype().is_vector()) {
        return builder_.CreateSelect(cond, emit(op->args[1]), emit(op->args[2]));
    }
    auto* then_block = llvm::BasicBlock::Create(ctx_, "if_then", function_);
    auto* else_block = llvm::BasicBlock::Create(ctx_, "if_else", function_);
    auto* end_block = llvm::BasicBlock::Create(ctx_, "if_end", function_);
    builder_.CreateCondBr(cond, then_block, else_block);
    return join_arms(end_block, {{then_block, [&] { return emit(op->args[1]); }},
                                 {else_block, [&] { return emit(op->args[2]); }}});
}

llvm::Value* CodeGenLLVM::emit_(const Reduce* op) {
    internal_error() << func_name_ << ": Reduce reached codegen; lower tensor expressions first";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::codegen
