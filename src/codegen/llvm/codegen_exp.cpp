// exp of float32 values, scalar or vector, as inline arithmetic.
//
// LLVM lowers llvm.exp on a vector to one libm expf call per lane (it has no vector math
// library here), which made a softmax row or a sigmoid cost ~2 ns per element. This is the
// classic Cephes expf, in vector instructions: exp(x) = 2^n * exp(r) with n = round(x / ln 2)
// and r = x - n ln 2 (ln 2 in two parts, so r is exact to a few ulp), exp(r) a degree-7
// polynomial on [-ln2 / 2, ln2 / 2]; 2^n is built from its exponent bits, in two factors so that
// results in the subnormal range come out right. Within 2 ulp of the correctly rounded result
// (tests/unit/codegen/exp_test.cpp); exp(NaN) is NaN, exp(+inf) +inf, exp(-inf) 0, results
// above FLT_MAX +inf and below the smallest subnormal 0.
#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/codegen_llvm.h"

namespace anvil::codegen {

llvm::Value* CodeGenLLVM::emit_exp_f32(llvm::Value* x) {
    namespace I = llvm::Intrinsic;
    llvm::Type* ft = x->getType();
    auto c = [&](double v) { return llvm::ConstantFP::get(ft, v); };
    auto mul_add = [&](llvm::Value* a, llvm::Value* b, llvm::Value* d) {
        // fmuladd: fused where the target has FMA, a multiply and an add elsewhere (Cephes'
        // reduction is exact either way: n * 0.693359375 needs no more than 17 bits).
        return builder_.CreateIntrinsic(I::fmuladd, {ft}, {a, b, d});
    };
    // Past these every result is +inf or 0; clamping keeps n within the exponent's range.
    llvm::Value* xc = builder_.CreateBinaryIntrinsic(I::maxnum, x, c(-104.0));
    xc = builder_.CreateBinaryIntrinsic(I::minnum, xc, c(89.0));
    // n = round(x / ln2) by adding and subtracting 1.5 * 2^23, which leaves no fraction bits: one
    // add each on every x86 (llvm.roundeven is a libm call per lane without SSE4.1).
    const double magic = 12582912.0;
    llvm::Value* n = builder_.CreateFSub(mul_add(xc, c(1.44269504088896341), c(magic)), c(magic));
    // r = x - n ln2, ln2 = 0.693359375 - 2.12194440e-4 (the first part exact in 9 bits).
    llvm::Value* r = mul_add(n, c(-0.693359375), xc);
    r = mul_add(n, c(2.12194440e-4), r);
    // exp(r) = 1 + r + r^2 p(r).
    llvm::Value* p = c(1.9875691500e-4);
    for (double k :
         {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}) {
        p = mul_add(p, r, c(k));
    }
    llvm::Value* y = mul_add(p, builder_.CreateFMul(r, r), builder_.CreateFAdd(r, c(1.0)));
    // 2^n = 2^(n >> 1) * 2^(n - (n >> 1)): each factor's exponent stays normal for n in
    // [-150, 128].
    llvm::Type* it = ft->isVectorTy()
                         ? static_cast<llvm::Type*>(llvm::VectorType::get(
                               builder_.getInt32Ty(), llvm::cast<llvm::VectorType>(ft)))
                         : builder_.getInt32Ty();
    auto i = [&](int v) { return llvm::ConstantInt::get(it, v); };
    llvm::Value* ni = builder_.CreateFPToSI(n, it);
    llvm::Value* n1 = builder_.CreateAShr(ni, i(1));
    llvm::Value* n2 = builder_.CreateSub(ni, n1);
    auto pow2 = [&](llvm::Value* e) {
        return builder_.CreateBitCast(builder_.CreateShl(builder_.CreateAdd(e, i(127)), i(23)), ft);
    };
    llvm::Value* result = builder_.CreateFMul(builder_.CreateFMul(y, pow2(n1)), pow2(n2));
    // NaN in, NaN out (the clamps above drop it).
    llvm::Value* is_nan = builder_.CreateFCmpUNO(x, x);
    return builder_.CreateSelect(is_nan, x, result);
}

}  // namespace anvil::codegen
