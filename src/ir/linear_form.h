// The simplifier's canonical form for integer index arithmetic: a sum of
// coefficient * atom terms plus a constant, where an atom is any expression that is not an
// Add, Sub, or Mul by a constant (a variable, floordiv(...), a load, a product of two atoms).
//
// Coefficients and the constant are kept at the type's width (ring arithmetic modulo 2^bits),
// so converting to and from the form is exact even for wrapping unsigned arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expr.h"

namespace anvil {

struct LinearTerm {
    PrimExpr atom;
    int64_t coeff;
    size_t hash;  // structural_hash(atom): most merge candidates are rejected without a walk
};

struct LinearSum {
    DataType dtype;
    std::vector<LinearTerm> terms;  // in order of first appearance; no zero coefficients
    int64_t constant = 0;

    explicit LinearSum(DataType t) : dtype(t) {}
    bool is_const() const { return terms.empty(); }
    // Adds coeff * atom, merging with a structurally equal atom.
    void add_term(const PrimExpr& atom, int64_t coeff);
    void add_term(const PrimExpr& atom, int64_t coeff, size_t hash);
    // this += other * scale
    void add(const LinearSum& other, int64_t scale = 1);
    void scale(int64_t c);
    // The coefficient c as a signed number at the type's width (uint coefficients too, so that
    // 0xffffffff reads as -1 and prints as a subtraction).
    int64_t signed_value(int64_t c) const;
};

// Decomposes a scalar integer expression (its sub-expressions already simplified).
LinearSum to_linear(const PrimExpr& e);
// Rebuilds an expression: positive terms first, then subtractions, then the constant.
PrimExpr from_linear(const LinearSum& s);
// Replaces floordiv(x, c) * (k*c) + floormod(x, c) * k by x * k (what split loops produce).
void merge_div_mod(LinearSum* s);

}  // namespace anvil
