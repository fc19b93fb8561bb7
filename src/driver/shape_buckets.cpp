#include "driver/shape_buckets.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <unordered_map>

#include "graph/expr_functor.h"
#include "ir/analyzer.h"
#include "ops/control_flow.h"
#include "support/error.h"

namespace anvil::driver {

namespace {

constexpr const char* kOption = "--shape-buckets";

std::string sizes_text(const std::vector<int64_t>& sizes) {
    std::string out;
    for (int64_t s : sizes) out += (out.empty() ? "" : ",") + std::to_string(s);
    return out;
}

// The names of the symbolic dimensions in the types of every graph function of `m`.
std::set<std::string> dimension_names(const graph::IRModule& m) {
    std::vector<graph::Type> types;
    for (const auto& [name, f] : m.functions) {
        for (const auto& p : f->params) types.push_back(p->type);
        graph::post_order_visit(f->body, [&](const graph::Expr& e) { types.push_back(e->type); });
    }
    std::set<std::string> names;
    for (const Var* v : ops::dimension_vars(types)) names.insert(v->name);
    return names;
}

// Replaces the variables of `map` in the shape fields (dimension expressions) of attributes.
class ShapeFieldSubstituter : public graph::AttrVisitor {
public:
    explicit ShapeFieldSubstituter(const std::vector<std::pair<Ref<Var>, PrimExpr>>& map)
        : map_(map) {}
    void visit(const char*, int64_t*) override {}
    void visit(const char*, double*) override {}
    void visit(const char*, bool*) override {}
    void visit(const char*, std::string*) override {}
    void visit(const char*, std::vector<int64_t>*) override {}
    void visit(const char*, std::vector<double>*) override {}
    void visit(const char*, std::vector<std::string>*) override {}
    void visit(const char*, DataType*) override {}
    void visit(const char*, std::vector<PrimExpr>* dims) override {
        for (auto& d : *dims) d = simplify(substitute(d, map_));
    }

private:
    const std::vector<std::pair<Ref<Var>, PrimExpr>>& map_;
};

// Rebuilds a fused function with dimension variables replaced by constants: new parameters of
// the substituted types, every call made again (so its type rule runs on the new shapes) with
// its shape attributes substituted.
class DimSubstituter : public graph::ExprMutator {
public:
    explicit DimSubstituter(std::vector<std::pair<Ref<Var>, PrimExpr>> map)
        : map_(std::move(map)) {}

    Ref<graph::Function> run(const graph::Function& f) {
        std::vector<Ref<graph::Var>> params;
        for (const auto& p : f.params) {
            Ref<graph::Var> v = graph::make_var(p->name, substitute_type(p->type), p->loc);
            params_[p.get()] = graph::Expr(v);
            params.push_back(v);
        }
        graph::Expr body = mutate(f.body);
        return graph::make_function(std::move(params), body, f.primitive, f.loc, f.attrs);
    }

protected:
    graph::Expr mutate_(const graph::Var* op, const graph::Expr& self) override {
        auto it = params_.find(op);
        return it == params_.end() ? self : it->second;
    }
    graph::Expr mutate_(const graph::Call* op, const graph::Expr&) override {
        ANVIL_CHECK(op->op.defined()) << "a fused function calls another function";
        std::vector<graph::Expr> args;
        mutate_all(op->args, &args);
        Ref<graph::Attrs> attrs;
        if (op->attrs.defined()) {
            attrs = op->attrs->clone();
            ShapeFieldSubstituter s(map_);
            const_cast<graph::Attrs&>(*attrs).visit_fields(s);  // a fresh clone, ours
        }
        return graph::make_call(op->op, std::move(args), attrs, op->loc);
    }
    graph::Expr mutate_(const graph::Tuple* op, const graph::Expr&) override {
        std::vector<graph::Expr> fields;
        mutate_all(op->fields, &fields);
        return graph::make_tuple(std::move(fields), op->loc);
    }
    graph::Expr mutate_(const graph::TupleGetItem* op, const graph::Expr&) override {
        return graph::make_tuple_get_item(mutate(op->tuple), op->index, op->loc);
    }

private:
    graph::Type substitute_type(const graph::Type& t) const {
        if (auto* tt = t.as<graph::TensorType>()) {
            std::vector<PrimExpr> shape;
            for (const auto& d : tt->shape) shape.push_back(simplify(substitute(d, map_)));
            return graph::make_tensor_type(std::move(shape), tt->dtype);
        }
        if (auto* tuple = t.as<graph::TupleType>()) {
            std::vector<graph::Type> fields;
            for (const auto& f : tuple->fields) fields.push_back(substitute_type(f));
            return graph::make_tuple_type(std::move(fields));
        }
        return t;
    }

    std::vector<std::pair<Ref<Var>, PrimExpr>> map_;
    std::unordered_map<const graph::ExprNode*, graph::Expr> params_;
};

}  // namespace

ShapeBuckets parse_shape_buckets(const std::vector<std::string>& args) {
    ShapeBuckets buckets;
    for (const auto& arg : args) {
        std::istringstream words(arg);
        std::string spec;
        while (words >> spec) {
            size_t eq = spec.find('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
                user_error() << kOption << ": '" << spec
                             << "' is not NAME=SIZE,SIZE,... (e.g. n=1,8,32)";
            }
            std::string name = spec.substr(0, eq);
            if (buckets.count(name)) {
                user_error() << kOption << ": the dimension '" << name << "' is given twice";
            }
            std::vector<int64_t> sizes;
            std::istringstream items(spec.substr(eq + 1));
            std::string item;
            while (std::getline(items, item, ',')) {
                int64_t size = 0;
                try {
                    size_t used = 0;
                    size = std::stoll(item, &used);
                    if (used != item.size()) throw std::invalid_argument(item);
                } catch (const std::exception&) {
                    user_error() << kOption << ": '" << item << "' in '" << spec
                                 << "' is not a size (sizes are positive integers)";
                }
                if (size <= 0) {
                    user_error() << kOption << ": '" << spec << "': sizes must be positive, not "
                                 << size;
                }
                if (std::find(sizes.begin(), sizes.end(), size) != sizes.end()) {
                    user_error() << kOption << ": '" << spec << "' gives " << size << " twice";
                }
                sizes.push_back(size);
            }
            if (spec.back() == ',') {
                user_error() << kOption << ": '" << spec
                             << "' is not NAME=SIZE,SIZE,... (e.g. n=1,8,32)";
            }
            buckets[name] = std::move(sizes);
        }
    }
    return buckets;
}

void check_shape_buckets(const graph::IRModule& m, const ShapeBuckets& buckets) {
    if (buckets.empty()) return;
    std::set<std::string> names = dimension_names(m);
    int64_t combinations = 1;
    std::string product;
    for (const auto& [name, sizes] : buckets) {
        if (!names.count(name)) {
            std::string known;
            for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
            user_error() << kOption << ": the model has no symbolic dimension '" << name << "' "
                         << (known.empty() ? "(its shapes are all static)"
                                           : "(its symbolic dimensions: " + known + ")");
        }
        if (sizes.empty()) user_error() << kOption << ": no sizes for '" << name << "'";
        for (size_t i = 0; i < sizes.size(); ++i) {
            if (sizes[i] <= 0) {
                user_error() << kOption << ": " << name << "=" << sizes_text(sizes)
                             << ": sizes must be positive, not " << sizes[i];
            }
            if (std::find(sizes.begin(), sizes.begin() + i, sizes[i]) != sizes.begin() + i) {
                user_error() << kOption << ": " << name << "=" << sizes_text(sizes) << " gives "
                             << sizes[i] << " twice";
            }
        }
        // Saturating: the lists' lengths are bounded only by the text.
        combinations =
            std::min(combinations * static_cast<int64_t>(sizes.size()), kMaxBucketCombinations + 1);
        product += (product.empty() ? "" : " x ") + std::to_string(sizes.size());
    }
    if (combinations > kMaxBucketCombinations) {
        user_error() << kOption << ": " << product << " combinations of sizes, more than "
                     << kMaxBucketCombinations
                     << " (a kernel using every bucketed dimension is compiled once per "
                        "combination); give fewer sizes";
    }
}

BucketVariants bucket_variants(const graph::Function& f, const ShapeBuckets& buckets) {
    BucketVariants out;
    if (buckets.empty()) return out;
    std::vector<graph::Type> types;
    for (const auto& p : f.params) types.push_back(p->type);
    graph::post_order_visit(f.body, [&](const graph::Expr& e) { types.push_back(e->type); });
    for (const Var* v : ops::dimension_vars(types)) {
        if (buckets.count(v->name)) out.dims.push_back(Ref<Var>(v));
    }
    if (out.dims.empty()) return out;
    std::stable_sort(out.dims.begin(), out.dims.end(),
                     [](const Ref<Var>& a, const Ref<Var>& b) { return a->name < b->name; });
    // Every combination, the last dimension varying fastest.
    out.sizes = {{}};
    for (const auto& d : out.dims) {
        std::vector<std::vector<int64_t>> next;
        for (const auto& row : out.sizes) {
            for (int64_t s : buckets.at(d->name)) {
                next.push_back(row);
                next.back().push_back(s);
            }
        }
        out.sizes = std::move(next);
    }
    return out;
}

Ref<graph::Function> specialize_dims(const graph::Function& f, const std::vector<Ref<Var>>& dims,
                                     const std::vector<int64_t>& sizes) {
    ANVIL_CHECK(dims.size() == sizes.size())
        << "specializing " << dims.size() << " dimension(s) with " << sizes.size() << " size(s)";
    std::vector<std::pair<Ref<Var>, PrimExpr>> map;
    for (size_t i = 0; i < dims.size(); ++i) {
        map.emplace_back(dims[i], make_int(dims[i]->dtype, sizes[i]));
    }
    return DimSubstituter(std::move(map)).run(f);
}

std::string bucket_suffix(const std::vector<Ref<Var>>& dims, const std::vector<int64_t>& sizes) {
    std::string out;
    for (size_t i = 0; i < dims.size(); ++i) {
        std::string name;
        for (char c : dims[i]->name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        out += (out.empty() ? "" : "_") + name + std::to_string(sizes[i]);
    }
    return out;
}

}  // namespace anvil::driver
