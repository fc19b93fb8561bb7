// The loop IR's intrinsic functions: math (LLVM intrinsics or libm, per lane where LLVM has no
// vector form), bit operations and fixed-point multiplies.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/TargetParser/Triple.h>

#include "codegen/llvm/codegen_llvm.h"
#include "ir/fixed_point.h"
#include "ir/intrinsics.h"
#include "support/error.h"

namespace anvil::codegen {

// Math intrinsics compute in float32 for float16/bfloat16 and in the type itself otherwise.
llvm::Value* CodeGenLLVM::emit_call_intrinsic(const Call* op) {
    DataType t = op->dtype;
    int arity = intrin::arity(op->name);
    ANVIL_CHECK(arity < 0 || static_cast<int>(op->args.size()) == arity)
        << func_name_ << ": " << op->name << " takes " << arity << " arguments, got "
        << op->args.size();
    std::vector<llvm::Value*> args;
    for (const auto& a : op->args) args.push_back(emit(a));
    if (op->name == intrin::kAbs && !t.is_floating()) {
        if (!t.is_int()) return args[0];
        return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, args[0], builder_.getFalse());
    }
    ANVIL_CHECK(t.is_floating()) << func_name_ << ": " << op->name << " of " << t.str();
    const bool widen = t.bits() == 16;
    DataType ct = widen ? DataType::float32().with_lanes(t.lanes()) : t;
    for (size_t i = 0; i < args.size(); ++i) {
        ANVIL_CHECK(op->args[i].dtype() == t)
            << func_name_ << ": " << op->name << " argument of type " << op->args[i].dtype().str()
            << ", call of type " << t.str();
        if (widen) args[i] = emit_cast(t, ct, args[i]);
    }
    llvm::Value* r = emit_math(op->name, ct, std::move(args));
    return widen ? emit_cast(ct, t, r) : r;
}

// Bit operations map to single instructions; shift amounts outside [0, bits) give poison, which
// the ops that shift by data keep out of their results (ir/intrinsics.h).
llvm::Value* CodeGenLLVM::emit_bitwise(const Call* op) {
    DataType t = op->dtype;
    ANVIL_CHECK(!t.is_floating() && !t.is_handle())
        << func_name_ << ": " << op->name << " of " << t.str();
    ANVIL_CHECK(static_cast<int>(op->args.size()) == intrin::arity(op->name))
        << func_name_ << ": " << op->name << " takes " << intrin::arity(op->name)
        << " arguments, got " << op->args.size();
    std::vector<llvm::Value*> a;
    for (const auto& arg : op->args) {
        ANVIL_CHECK(arg.dtype() == t) << func_name_ << ": " << op->name << " argument of type "
                                      << arg.dtype().str() << ", call of type " << t.str();
        a.push_back(emit(arg));
    }
    const std::string& name = op->name;
    if (name == intrin::kBitwiseAnd) return builder_.CreateAnd(a[0], a[1]);
    if (name == intrin::kBitwiseOr) return builder_.CreateOr(a[0], a[1]);
    if (name == intrin::kBitwiseXor) return builder_.CreateXor(a[0], a[1]);
    if (name == intrin::kBitwiseNot) return builder_.CreateNot(a[0]);
    if (name == intrin::kShiftLeft) return builder_.CreateShl(a[0], a[1]);
    return t.is_int() ? builder_.CreateAShr(a[0], a[1]) : builder_.CreateLShr(a[0], a[1]);
}

// The expansion of ir/fixed_point.h, each of its reused values emitted once and bound to a
// variable of this call's own (vars_ holds them while the expansion is emitted).
llvm::Value* CodeGenLLVM::emit_fixed_point_multiply(const Call* op) {
    ANVIL_CHECK(op->args.size() == 3 && op->dtype.element_of() == DataType::int32() &&
                op->args[0].dtype() == op->dtype)
        << func_name_ << ": " << op->name << " takes three int32 values, got " << op->args.size()
        << " arguments of type " << op->dtype.str();
    std::vector<Ref<Var>> bound;
    auto bind = [&](const PrimExpr& e) -> PrimExpr {
        if (e.is<Var>() || e.is<IntImm>()) return e;
        Ref<Var> v = make_var("fixed_point", e.dtype());
        vars_[v.get()] = emit(e);
        bound.push_back(v);
        return v;
    };
    PrimExpr x = bind(op->args[0]), m = bind(op->args[1]), s = bind(op->args[2]);
    HighMul high_mul;
    const int lanes = op->dtype.lanes();
    if (llvm::Triple(target_.mtriple).isX86() && lanes >= 4 && lanes % 2 == 0) {
        high_mul = [&](const PrimExpr& a, const PrimExpr& b) -> PrimExpr {
            Ref<Var> v = make_var("fixed_point_high", a.dtype());
            vars_[v.get()] = emit_doubling_high_mul(emit(a), emit(b), lanes);
            bound.push_back(v);
            return v;
        };
    }
    llvm::Value* result = emit(expand_fixed_point_multiply(op->name, x, m, s, bind, high_mul));
    for (const auto& v : bound) vars_.erase(v.get());
    return result;
}

// floor((a * m + 2^30) / 2^31) of int32 lanes (ir/fixed_point.h's HighMul) without widening the
// lanes to int64 and narrowing them back: the lanes as pairs, one int64 each, multiplied as the
// even lanes' and as the odd lanes' (copied down into the even ones) sign-extended low halves,
// what vpmuldq computes; nudged; and the bits 31..62 of each product taken where its lane was:
// the even ones shifted right into the low half, the odd ones left into the high half, blended.
// (An arithmetic shift right by 32 for the odd lanes would do too, but x86's lowering of it
// loses the sign bits that make the product one vpmuldq: three vpmuludq instead.)
llvm::Value* CodeGenLLVM::emit_doubling_high_mul(llvm::Value* a, llvm::Value* m, int lanes) {
    auto* pairs = llvm::FixedVectorType::get(builder_.getInt64Ty(), lanes / 2);
    auto* words = llvm::FixedVectorType::get(builder_.getInt32Ty(), lanes);
    auto splat = [&](int64_t v) { return llvm::ConstantInt::get(pairs, v); };
    std::vector<int> down, take;
    for (int i = 0; i < lanes; ++i) {
        down.push_back(i | 1);
        take.push_back(i % 2 == 0 ? i : lanes + i);
    }
    auto even = [&](llvm::Value* v) {
        v = builder_.CreateBitCast(v, pairs);
        return builder_.CreateAShr(builder_.CreateShl(v, splat(32)), splat(32));
    };
    auto odd = [&](llvm::Value* v) { return even(builder_.CreateShuffleVector(v, down)); };
    llvm::Value* nudge = splat(int64_t(1) << 30);
    llvm::Value* low = builder_.CreateAdd(builder_.CreateMul(even(a), even(m)), nudge);
    llvm::Value* high = builder_.CreateAdd(builder_.CreateMul(odd(a), odd(m)), nudge);
    low = builder_.CreateBitCast(builder_.CreateLShr(low, splat(31)), words);
    high = builder_.CreateBitCast(builder_.CreateShl(high, splat(1)), words);
    return builder_.CreateShuffleVector(low, high, take);
}

unsigned CodeGenLLVM::vpdpbusd_for(int lanes) const {
    if (!target_.has_feature("avx512vnni")) return llvm::Intrinsic::not_intrinsic;
    if (lanes == 16) return llvm::Intrinsic::x86_avx512_vpdpbusd_512;
    if (!target_.has_feature("avx512vl")) return llvm::Intrinsic::not_intrinsic;
    if (lanes == 8) return llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    if (lanes == 4) return llvm::Intrinsic::x86_avx512_vpdpbusd_128;
    return llvm::Intrinsic::not_intrinsic;
}

llvm::Value* CodeGenLLVM::emit_dot_u8s8(const Call* op, llvm::Value* acc) {
    DataType t = op->dtype;
    ANVIL_CHECK(op->args.size() == 2 && t.is_int() && t.bits() == 32 && op->args[0].dtype() == t &&
                op->args[1].dtype() == t)
        << func_name_ << ": dot_u8s8 takes and returns int32, got " << t.str();
    const int lanes = t.lanes();
    auto vnni = static_cast<llvm::Intrinsic::ID>(vpdpbusd_for(lanes));
    llvm::Value* a = emit(op->args[0]);
    llvm::Value* b = emit(op->args[1]);
    if (vnni != llvm::Intrinsic::not_intrinsic) {
        return builder_.CreateIntrinsic(vnni, {}, {acc, a, b});
    }
    if (int width = pmaddwd_width(lanes); width > 0) {
        // x86 without VNNI: pmaddwd on 16-bit halves of each lane, exact (vpmaddubsw would
        // saturate a pair of 255 x -128 products in int16). The even bytes (0 and 2) of each
        // lane and the odd ones (1 and 3), each widened into its 16-bit half: a's zero-extended,
        // b's sign-extended. pmaddwd sums each lane's two halves' products: a0 b0 + a2 b2 and
        // a1 b1 + a3 b3. Lanes beyond the widest pmaddwd go in chunks of it.
        auto madd = static_cast<llvm::Intrinsic::ID>(pmaddwd_for(width));
        auto* halves = llvm::FixedVectorType::get(builder_.getInt16Ty(), 2 * width);
        auto splat = [&](int v) { return llvm::ConstantInt::get(halves, v); };
        auto chunk = [&](llvm::Value* v, int c) {
            if (width == lanes) return v;
            std::vector<int> idx;
            for (int i = 0; i < width; ++i) idx.push_back(c * width + i);
            return builder_.CreateShuffleVector(v, idx);
        };
        std::vector<llvm::Value*> parts;
        for (int c = 0; c < lanes / width; ++c) {
            llvm::Value* ah = builder_.CreateBitCast(chunk(a, c), halves);
            llvm::Value* bh = builder_.CreateBitCast(chunk(b, c), halves);
            llvm::Value* a_even = builder_.CreateAnd(ah, splat(0xff));
            llvm::Value* a_odd = builder_.CreateLShr(ah, splat(8));
            llvm::Value* b_even = builder_.CreateAShr(builder_.CreateShl(bh, splat(8)), splat(8));
            llvm::Value* b_odd = builder_.CreateAShr(bh, splat(8));
            llvm::Value* even = builder_.CreateIntrinsic(madd, {}, {a_even, b_even});
            llvm::Value* odd = builder_.CreateIntrinsic(madd, {}, {a_odd, b_odd});
            parts.push_back(builder_.CreateAdd(even, odd));
        }
        // Concatenated back, pairwise.
        while (parts.size() > 1) {
            std::vector<llvm::Value*> joined;
            for (size_t i = 0; i < parts.size(); i += 2) {
                int n = static_cast<int>(
                    llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements());
                std::vector<int> idx;
                for (int k = 0; k < 2 * n; ++k) idx.push_back(k);
                joined.push_back(builder_.CreateShuffleVector(parts[i], parts[i + 1], idx));
            }
            parts = std::move(joined);
        }
        return builder_.CreateAdd(acc, parts[0]);
    }
    // Portable: the bytes as int32, products summed four by four.
    auto* bytes = llvm::FixedVectorType::get(builder_.getInt8Ty(), 4 * lanes);
    auto* wide = llvm::FixedVectorType::get(builder_.getInt32Ty(), 4 * lanes);
    llvm::Value* ab = builder_.CreateBitCast(a, bytes);
    llvm::Value* bb = builder_.CreateBitCast(b, bytes);
    llvm::Value* products =
        builder_.CreateMul(builder_.CreateZExt(ab, wide), builder_.CreateSExt(bb, wide));
    llvm::Value* sum = acc;
    for (int k = 0; k < 4; ++k) {
        std::vector<int> lanes_k;
        for (int i = 0; i < lanes; ++i) lanes_k.push_back(4 * i + k);
        llvm::Value* part = builder_.CreateShuffleVector(products, lanes_k);
        if (lanes == 1) part = builder_.CreateExtractElement(part, uint64_t(0));
        sum = builder_.CreateAdd(sum, part);
    }
    return sum;
}

int CodeGenLLVM::pmaddwd_width(int lanes) const {
    for (int width : {16, 8, 4}) {
        if (width <= lanes && lanes % width == 0 && (lanes / width & (lanes / width - 1)) == 0 &&
            pmaddwd_for(width) != llvm::Intrinsic::not_intrinsic) {
            return width;
        }
    }
    return 0;
}

unsigned CodeGenLLVM::pmaddwd_for(int lanes) const {
    if (!llvm::Triple(target_.mtriple).isX86()) return llvm::Intrinsic::not_intrinsic;
    if (lanes == 16 && target_.has_feature("avx512bw")) {
        return llvm::Intrinsic::x86_avx512_pmaddw_d_512;
    }
    if (lanes == 8 && target_.has_feature("avx2")) return llvm::Intrinsic::x86_avx2_pmadd_wd;
    if (lanes == 4 && target_.has_feature("sse2")) return llvm::Intrinsic::x86_sse2_pmadd_wd;
    return llvm::Intrinsic::not_intrinsic;
}

unsigned CodeGenLLVM::vdpbf16ps_for(int lanes) const {
    if (!target_.has_feature("avx512bf16")) return llvm::Intrinsic::not_intrinsic;
    if (lanes == 16) return llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512;
    if (!target_.has_feature("avx512vl")) return llvm::Intrinsic::not_intrinsic;
    if (lanes == 8) return llvm::Intrinsic::x86_avx512bf16_dpbf16ps_256;
    if (lanes == 4) return llvm::Intrinsic::x86_avx512bf16_dpbf16ps_128;
    return llvm::Intrinsic::not_intrinsic;
}

llvm::Value* CodeGenLLVM::emit_dot_bf16(const Call* op, llvm::Value* acc) {
    DataType t = op->dtype;
    DataType word = DataType::int32().with_lanes(t.lanes());
    ANVIL_CHECK(op->args.size() == 2 && t.is_float() && t.bits() == 32 &&
                op->args[0].dtype() == word && op->args[1].dtype() == word)
        << func_name_ << ": dot_bf16 takes int32 and returns float32, got " << t.str();
    const int lanes = t.lanes();
    auto bf16 = static_cast<llvm::Intrinsic::ID>(vdpbf16ps_for(lanes));
    llvm::Value* a = emit(op->args[0]);
    llvm::Value* b = emit(op->args[1]);
    if (bf16 != llvm::Intrinsic::not_intrinsic) {
        auto* pairs = llvm::FixedVectorType::get(builder_.getBFloatTy(), 2 * lanes);
        return builder_.CreateIntrinsic(
            bf16, {}, {acc, builder_.CreateBitCast(a, pairs), builder_.CreateBitCast(b, pairs)});
    }
    // Portable: each half as a float32 (its bits the upper half), products summed in pairs.
    auto* halves = llvm::FixedVectorType::get(builder_.getInt16Ty(), 2 * lanes);
    auto* wide = llvm::FixedVectorType::get(builder_.getInt32Ty(), 2 * lanes);
    auto* floats = llvm::FixedVectorType::get(builder_.getFloatTy(), 2 * lanes);
    auto widen = [&](llvm::Value* v) {
        llvm::Value* w = builder_.CreateZExt(builder_.CreateBitCast(v, halves), wide);
        return builder_.CreateBitCast(builder_.CreateShl(w, 16), floats);
    };
    llvm::Value* products = builder_.CreateFMul(widen(a), widen(b));
    llvm::Value* sum = acc;
    for (int k = 0; k < 2; ++k) {
        std::vector<int> lanes_k;
        for (int i = 0; i < lanes; ++i) lanes_k.push_back(2 * i + k);
        llvm::Value* part = builder_.CreateShuffleVector(products, lanes_k);
        if (lanes == 1) part = builder_.CreateExtractElement(part, uint64_t(0));
        sum = builder_.CreateFAdd(sum, part);
    }
    return sum;
}

llvm::Value* CodeGenLLVM::emit_math(const std::string& name, DataType t,
                                    std::vector<llvm::Value*> args) {
    namespace I = llvm::Intrinsic;
    llvm::Value* x = args[0];
    auto unary = [&](I::ID id) { return builder_.CreateUnaryIntrinsic(id, x); };
    llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
    const bool f32 = t.bits() == 32;
    // float32 exp inline (vectorized); llvm.exp would be one libm call per lane.
    auto exp = [&](llvm::Value* v) {
        return f32 ? emit_exp_f32(v) : builder_.CreateUnaryIntrinsic(I::exp, v);
    };
    if (name == intrin::kExp) return exp(x);
    if (name == intrin::kLog) return unary(I::log);
    if (name == intrin::kSqrt) return unary(I::sqrt);
    if (name == intrin::kRsqrt) return builder_.CreateFDiv(one, unary(I::sqrt));
    if (name == intrin::kAbs) return unary(I::fabs);
    if (name == intrin::kFloor) return unary(I::floor);
    if (name == intrin::kCeil) return unary(I::ceil);
    if (name == intrin::kRound) return unary(I::roundeven);
    if (name == intrin::kPow) return builder_.CreateBinaryIntrinsic(I::pow, x, args[1]);
    if (name == intrin::kFma) {
        return builder_.CreateIntrinsic(I::fma, {x->getType()}, {x, args[1], args[2]});
    }
    if (name == intrin::kSigmoid) {
        llvm::Value* e = exp(builder_.CreateFNeg(x));
        return builder_.CreateFDiv(one, builder_.CreateFAdd(one, e));
    }
    if (name == intrin::kTanh) return emit_libm(f32 ? "tanhf" : "tanh", t, x);
    if (name == intrin::kErf) return emit_libm(f32 ? "erff" : "erf", t, x);
    for (const char* fn :
         {intrin::kSin, intrin::kCos, intrin::kTan, intrin::kAsin, intrin::kAcos, intrin::kAtan,
          intrin::kSinh, intrin::kCosh, intrin::kAsinh, intrin::kAcosh, intrin::kAtanh}) {
        if (name == fn) return emit_libm(f32 ? name + "f" : name, t, x);
    }
    internal_error() << func_name_ << ": no code generation for intrinsic " << name;
    ANVIL_UNREACHABLE();
}

// libm has no vector entry points we can rely on, so vectors are done lane by lane.
llvm::Value* CodeGenLLVM::emit_libm(const std::string& fname, DataType t, llvm::Value* x) {
    llvm::Type* elem = llvm_type(t.element_of());
    llvm::FunctionCallee fn =
        module_->getOrInsertFunction(fname, llvm::FunctionType::get(elem, {elem}, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
        f->setDoesNotThrow();
        f->setWillReturn();
    }
    if (t.is_scalar()) return builder_.CreateCall(fn, {x});
    llvm::Value* out = llvm::PoisonValue::get(x->getType());
    for (int lane = 0; lane < t.lanes(); ++lane) {
        llvm::Value* r = builder_.CreateCall(fn, {builder_.CreateExtractElement(x, lane)});
        out = builder_.CreateInsertElement(out, r, lane);
    }
    return out;
}

}  // namespace anvil::codegen
