// Structural equality and hashing of scalar expressions.
//
// Two expressions are structurally equal when they have the same node kinds, dtypes, constant
// values and children. Variables are equal by identity; with map_free_vars a consistent
// one-to-one renaming of variables is allowed (and buffers then compare by name, dtype, shape
// and scope instead of identity). Variables *defined* inside the compared IR (loop variables,
// reduction axes, let-bound names) are always matched by correspondence, whatever the mode:
// the definer records them with bind_var, or for a binding that ends with its scope (a loop's
// variable, which a sibling loop may reuse) with a StructuralEqualizer::Scope, before comparing
// the uses.
//
// structural_hash ignores variable identity (a Var hashes by name and dtype), so expressions
// equal modulo renaming hash equal; it is a filter for hash maps, equality decides.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace anvil {

// The comparison with its variable and buffer correspondences; the loop-IR equality wraps it
// and adds the statements, binding each loop's variable to the other loop's for its body.
class StructuralEqualizer {
public:
    struct Options {
        // Free variables and buffers may correspond one-to-one instead of by identity.
        bool map_free_vars = false;
        // Any NaN equals any NaN, whatever its sign and payload: text writes them all as `nan`.
        // Off, floats compare bitwise, since the bits can be observed (reinterpret).
        bool ignore_nan_bits = false;
    };

    // Bindings that end with a definition's scope (a loop, a let, an allocation): destroying
    // the Scope restores what each object it bound corresponded to before. A scoped binding
    // shadows an earlier one of the same object, as an inner loop over the outer loop's Var does.
    class Scope {
    public:
        explicit Scope(StructuralEqualizer& eq) : eq_(eq) {}
        ~Scope();
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

        // False, binding nothing, when the dtypes differ.
        bool bind_var(const Var* a, const Var* b);
        void bind_buffer(const Buffer* a, const Buffer* b);

    private:
        template <typename T>
        struct Saved {
            const T* a;
            const T* b;
            const T* old_a_to_b;  // null: was unmapped
            const T* old_b_to_a;
        };
        StructuralEqualizer& eq_;
        std::vector<Saved<Var>> vars_;
        std::vector<Saved<Buffer>> buffers_;
    };

    explicit StructuralEqualizer(bool map_free_vars = false)
        : StructuralEqualizer(Options{.map_free_vars = map_free_vars}) {}
    explicit StructuralEqualizer(Options options) : options_(options) {}
    virtual ~StructuralEqualizer() = default;

    bool equal(const PrimExpr& a, const PrimExpr& b);
    // Element by element; lists of different lengths differ.
    bool equal(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b);
    // A use of a variable: equal when recorded as corresponding, or identical and unmapped, or
    // (with map_free_vars) both unmapped and of one dtype, which records them.
    bool equal_var(const Var* a, const Var* b);
    bool equal_buffer(const Buffer* a, const Buffer* b);
    // Records that a (left side) corresponds to b (right side) because both are defined at the
    // same place, for the rest of the comparison. False when the dtypes differ or either is
    // already mapped to something else.
    bool bind_var(const Var* a, const Var* b);
    bool bind_buffer(const Buffer* a, const Buffer* b);

    bool map_free_vars() const { return options_.map_free_vars; }
    // True while an identical subtree is equal to itself without looking inside: nothing is
    // renamed (once something is, a shared subtree may use it differently on the two sides).
    bool renames_nothing() const {
        return !options_.map_free_vars && var_a_to_b_.empty() && buf_a_to_b_.empty();
    }

protected:
    bool equal_reduce(const Reduce* a, const Reduce* b);

private:
    Options options_;
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
