#include "ir/linear_form.h"

#include "ir/const_fold.h"
#include "ir/structural_equal.h"
#include "support/error.h"

namespace anvil {

namespace {

int64_t ring_add(DataType t, int64_t x, int64_t y) {
    return wrap_int(t, static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)));
}

int64_t ring_mul(DataType t, int64_t x, int64_t y) {
    return wrap_int(t, static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)));
}

}  // namespace

int64_t LinearSum::signed_value(int64_t c) const {
    return wrap_int(DataType::int_(dtype.bits()), c);
}

void LinearSum::add_term(const PrimExpr& atom, int64_t coeff) {
    add_term(atom, coeff, structural_hash(atom));
}

void LinearSum::add_term(const PrimExpr& atom, int64_t coeff, size_t hash) {
    coeff = wrap_int(dtype, coeff);
    if (coeff == 0) return;
    for (size_t i = 0; i < terms.size(); ++i) {
        if (terms[i].hash == hash && structural_equal(terms[i].atom, atom)) {
            terms[i].coeff = ring_add(dtype, terms[i].coeff, coeff);
            if (terms[i].coeff == 0) terms.erase(terms.begin() + static_cast<ptrdiff_t>(i));
            return;
        }
    }
    terms.push_back({atom, coeff, hash});
}

void LinearSum::add(const LinearSum& other, int64_t scale) {
    for (const auto& t : other.terms) add_term(t.atom, ring_mul(dtype, t.coeff, scale), t.hash);
    constant = ring_add(dtype, constant, ring_mul(dtype, other.constant, scale));
}

void LinearSum::scale(int64_t c) {
    c = wrap_int(dtype, c);
    if (c == 0) {
        terms.clear();
        constant = 0;
        return;
    }
    std::vector<LinearTerm> kept;
    for (auto& t : terms) {
        int64_t k = ring_mul(dtype, t.coeff, c);
        if (k != 0) kept.push_back({t.atom, k, t.hash});  // a power-of-two scale can wrap to zero
    }
    terms = std::move(kept);
    constant = ring_mul(dtype, constant, c);
}

LinearSum to_linear(const PrimExpr& e) {
    LinearSum s(e.dtype());
    if (auto* imm = e.as<IntImm>()) {
        s.constant = wrap_int(e.dtype(), imm->value);
        return s;
    }
    if (auto* add = e.as<Add>()) {
        s = to_linear(add->a);
        s.add(to_linear(add->b), 1);
        return s;
    }
    if (auto* sub = e.as<Sub>()) {
        s = to_linear(sub->a);
        s.add(to_linear(sub->b), -1);
        return s;
    }
    if (auto* mul = e.as<Mul>()) {
        if (const int64_t* c = as_const_int(mul->b)) {
            s = to_linear(mul->a);
            s.scale(*c);
            return s;
        }
        if (const int64_t* c = as_const_int(mul->a)) {
            s = to_linear(mul->b);
            s.scale(*c);
            return s;
        }
    }
    s.add_term(e, 1);
    return s;
}

PrimExpr from_linear(const LinearSum& s) {
    DataType t = s.dtype;
    auto term_expr = [&](const PrimExpr& atom, int64_t magnitude) {
        return magnitude == 1 ? atom : make_binary(ExprKind::Mul, atom, make_int(t, magnitude));
    };
    bool has_positive = false;
    for (const auto& term : s.terms) has_positive |= s.signed_value(term.coeff) > 0;
    int64_t c = s.signed_value(s.constant);
    bool constant_leads = !has_positive && c > 0;  // `10 - i` rather than `i * -1 + 10`
    PrimExpr result = constant_leads ? make_int(t, s.constant) : PrimExpr();
    // Positive terms first so that a sum reads `j - i`, not `i * -1 + j`.
    for (const auto& term : s.terms) {
        if (s.signed_value(term.coeff) <= 0) continue;
        PrimExpr x = term_expr(term.atom, term.coeff);
        result = result.defined() ? make_binary(ExprKind::Add, result, x) : x;
    }
    for (const auto& term : s.terms) {
        int64_t k = s.signed_value(term.coeff);
        if (k > 0) continue;
        if (!result.defined()) {
            result = make_binary(ExprKind::Mul, term.atom, make_int(t, term.coeff));
        } else {
            result = make_binary(ExprKind::Sub, result, term_expr(term.atom, ring_mul(t, k, -1)));
        }
    }
    if (!result.defined()) return make_int(t, s.constant);
    if (!constant_leads && c > 0) {
        result = make_binary(ExprKind::Add, result, make_int(t, s.constant));
    } else if (c < 0) {
        result = make_binary(ExprKind::Sub, result, make_int(t, ring_mul(t, c, -1)));
    }
    return result;
}

void merge_div_mod(LinearSum* s) {
    for (size_t i = 0; i < s->terms.size(); ++i) {
        auto* mod = s->terms[i].atom.as<FloorMod>();
        const int64_t* c = mod ? as_const_int(mod->b) : nullptr;
        if (!c || *c <= 0) continue;
        int64_t k = s->terms[i].coeff;
        for (size_t j = 0; j < s->terms.size(); ++j) {
            auto* div = s->terms[j].atom.as<FloorDiv>();
            if (!div || !is_const_int(div->b, *c) || !structural_equal(div->a, mod->a)) continue;
            if (s->terms[j].coeff != ring_mul(s->dtype, k, *c)) continue;
            PrimExpr x = mod->a;
            s->terms.erase(s->terms.begin() + static_cast<ptrdiff_t>(std::max(i, j)));
            s->terms.erase(s->terms.begin() + static_cast<ptrdiff_t>(std::min(i, j)));
            s->add(to_linear(x), k);
            merge_div_mod(s);  // the merged x may complete another pair
            return;
        }
        // k * (x mod c) + k * c * ((x div c) mod d) = k * (x mod c * d): the digits of a
        // fused index over three or more axes, merged from the innermost out.
        for (size_t j = 0; j < s->terms.size(); ++j) {
            auto* outer = s->terms[j].atom.as<FloorMod>();
            auto* div = outer ? outer->a.as<FloorDiv>() : nullptr;
            const int64_t* d = outer ? as_const_int(outer->b) : nullptr;
            if (!div || !d || *d <= 0 || !is_const_int(div->b, *c)) continue;
            if (!structural_equal(div->a, mod->a)) continue;
            if (s->terms[j].coeff != ring_mul(s->dtype, k, *c)) continue;
            // The merged modulus must be a value of the index type.
            DataType mt = mod->b.dtype();
            __int128 modulus = static_cast<__int128>(*c) * *d;
            __int128 type_max = mt.is_uint() ? (static_cast<__int128>(1) << mt.bits()) - 1
                                             : (static_cast<__int128>(1) << (mt.bits() - 1)) - 1;
            if (modulus > type_max) continue;
            PrimExpr merged = floormod(mod->a, make_int(mt, static_cast<int64_t>(modulus)));
            s->terms.erase(s->terms.begin() + static_cast<ptrdiff_t>(std::max(i, j)));
            s->terms.erase(s->terms.begin() + static_cast<ptrdiff_t>(std::min(i, j)));
            s->add(to_linear(merged), k);
            merge_div_mod(s);
            return;
        }
    }
}

}  // namespace anvil
