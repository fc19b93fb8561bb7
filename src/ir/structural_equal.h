// Structural equality and hashing of scalar expressions.
//
// Two expressions are structurally equal when they have the same node kinds, dtypes, constant
// values and children. Variables are equal by identity; with map_free_vars a consistent
// one-to-one renaming of variables is allowed (and buffers then compare by name, dtype, shape
// and scope instead of identity). Variables *defined* inside the compared IR (loop variables,
// reduction axes, let-bound names) are always matched by correspondence, whatever the mode:
// the definer records them with bind_var before comparing the uses.
//
// structural_hash ignores variable identity (a Var hashes by name and dtype), so expressions
// equal modulo renaming hash equal; it is a filter for hash maps, equality decides.
#pragma once

#include <cstddef>
#include <unordered_map>

#include "ir/expr.h"

namespace anvil {

// The comparison with its variable and buffer correspondences; the loop-IR equality derives
// from or wraps it so that a For's variable maps to the other For's variable in both bodies.
class StructuralEqualizer {
public:
    explicit StructuralEqualizer(bool map_free_vars = false) : map_free_vars_(map_free_vars) {}
    virtual ~StructuralEqualizer() = default;

    bool equal(const PrimExpr& a, const PrimExpr& b);
    // A use of a variable: equal when recorded as corresponding, or identical and unmapped, or
    // (with map_free_vars) both unmapped and of one dtype, which records them.
    bool equal_var(const Var* a, const Var* b);
    bool equal_buffer(const Buffer* a, const Buffer* b);
    // Records that a (left side) corresponds to b (right side) because both are defined at the
    // same place. False when the dtypes differ or either is already mapped to something else.
    bool bind_var(const Var* a, const Var* b);
    bool bind_buffer(const Buffer* a, const Buffer* b);

    bool map_free_vars() const { return map_free_vars_; }

protected:
    bool equal_reduce(const Reduce* a, const Reduce* b);

private:
    bool map_free_vars_;
    std::unordered_map<const Var*, const Var*> var_a_to_b_;
    std::unordered_map<const Var*, const Var*> var_b_to_a_;
    std::unordered_map<const Buffer*, const Buffer*> buf_a_to_b_;
    std::unordered_map<const Buffer*, const Buffer*> buf_b_to_a_;
};

bool structural_equal(const PrimExpr& a, const PrimExpr& b, bool map_free_vars = false);
size_t structural_hash(const PrimExpr& e);

// Mixes `value` into `seed` (boost's recipe with a 64-bit constant).
inline size_t hash_combine(size_t seed, size_t value) {
    return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace anvil
