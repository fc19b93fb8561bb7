#include "graph/type.h"

#include <algorithm>
#include <sstream>

#include "ir/structural_equal.h"
#include "support/error.h"

namespace anvil::graph {

bool TensorType::is_static() const {
    for (const auto& d : shape) {
        if (!d.is<IntImm>()) return false;
    }
    return true;
}

std::vector<int64_t> TensorType::static_shape() const {
    std::vector<int64_t> out;
    for (const auto& d : shape) {
        const int64_t* v = as_const_int(d);
        ANVIL_CHECK(v) << "dimension " << d << " of " << type_str(Type(this)) << " is not static";
        out.push_back(*v);
    }
    return out;
}

int64_t TensorType::num_elements() const {
    int64_t n = 1;
    for (int64_t d : static_shape()) n *= d;
    return n;
}

Type make_tensor_type(std::vector<PrimExpr> shape, DataType dtype) {
    for (auto& d : shape) {
        ANVIL_CHECK(d.defined() && d.dtype().is_integer())
            << "tensor dimension of type " << d.dtype().str();
        if (d.dtype() != DataType::int64())
            d = d.is<IntImm>() ? make_int(DataType::int64(), d.as<IntImm>()->value)
                               : cast(DataType::int64(), d);
    }
    return Type(new TensorType(std::move(shape), dtype));
}

Type make_tensor_type(const std::vector<int64_t>& shape, DataType dtype) {
    std::vector<PrimExpr> dims;
    for (int64_t d : shape) dims.push_back(make_int(DataType::int64(), d));
    return Type(new TensorType(std::move(dims), dtype));
}

Type make_tuple_type(std::vector<Type> fields) {
    return Type(new TupleType(std::move(fields)));
}

Type make_func_type(std::vector<Type> params, Type ret) {
    return Type(new FuncType(std::move(params), std::move(ret)));
}

Type make_sequence_type(DataType dtype, std::optional<std::vector<int64_t>> dims) {
    if (dims) {
        for (int64_t d : *dims) ANVIL_CHECK(d >= SequenceType::kAnyDim) << "sequence dim " << d;
    }
    return Type(new SequenceType(dtype, std::move(dims), false));
}

Type make_empty_sequence_type(DataType dtype) {
    return Type(new SequenceType(dtype, std::nullopt, true));
}

Type sequence_of(const TensorType& element) {
    std::vector<int64_t> dims;
    for (const auto& d : element.shape) {
        const int64_t* v = as_const_int(d);
        dims.push_back(v ? *v : SequenceType::kAnyDim);
    }
    return make_sequence_type(element.dtype, std::move(dims));
}

std::optional<Type> join_sequence_types(const SequenceType& a, const SequenceType& b) {
    if (a.dtype != b.dtype) return std::nullopt;
    if (a.empty) return Type(&b);
    if (b.empty) return Type(&a);
    if (!a.dims || !b.dims || a.dims->size() != b.dims->size()) {
        return make_sequence_type(a.dtype, std::nullopt);
    }
    std::vector<int64_t> dims;
    for (size_t i = 0; i < a.dims->size(); ++i) {
        dims.push_back((*a.dims)[i] == (*b.dims)[i] ? (*a.dims)[i] : SequenceType::kAnyDim);
    }
    return make_sequence_type(a.dtype, std::move(dims));
}

bool fits_sequence(const TensorType& t, const SequenceType& s) {
    if (t.dtype != s.dtype) return false;
    if (s.empty || !s.dims) return true;
    if (s.dims->size() != t.ndim()) return false;
    for (size_t i = 0; i < t.ndim(); ++i) {
        const int64_t* v = as_const_int(t.shape[i]);
        if ((*s.dims)[i] != SequenceType::kAnyDim && (!v || *v != (*s.dims)[i])) return false;
    }
    return true;
}

Type make_optional_type(Type elem) {
    ANVIL_CHECK(elem.is<TensorType>() || elem.is<SequenceType>())
        << "an optional of " << type_str(elem);
    return Type(new OptionalType(std::move(elem)));
}

bool holds_strings(const Type& t) {
    if (auto* tt = t.as<TensorType>()) return tt->dtype.is_string();
    if (auto* st = t.as<SequenceType>()) return st->dtype.is_string();
    if (auto* ot = t.as<OptionalType>()) return holds_strings(ot->elem);
    if (auto* tuple = t.as<TupleType>()) {
        return std::any_of(tuple->fields.begin(), tuple->fields.end(), holds_strings);
    }
    return false;
}

bool type_equal(const Type& a, const Type& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined() || a->kind != b->kind) return false;
    auto all_equal = [](const std::vector<Type>& x, const std::vector<Type>& y) {
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i) {
            if (!type_equal(x[i], y[i])) return false;
        }
        return true;
    };
    switch (a->kind) {
        case TypeKind::TensorType: {
            auto *x = a.as<TensorType>(), *y = b.as<TensorType>();
            if (x->dtype != y->dtype || x->shape.size() != y->shape.size()) return false;
            for (size_t i = 0; i < x->shape.size(); ++i) {
                if (!structural_equal(x->shape[i], y->shape[i])) return false;
            }
            return true;
        }
        case TypeKind::TupleType:
            return all_equal(a.as<TupleType>()->fields, b.as<TupleType>()->fields);
        case TypeKind::FuncType: {
            auto *x = a.as<FuncType>(), *y = b.as<FuncType>();
            return all_equal(x->params, y->params) && type_equal(x->ret, y->ret);
        }
        case TypeKind::SequenceType: {
            auto *x = a.as<SequenceType>(), *y = b.as<SequenceType>();
            return x->dtype == y->dtype && x->dims == y->dims && x->empty == y->empty;
        }
        case TypeKind::OptionalType:
            return type_equal(a.as<OptionalType>()->elem, b.as<OptionalType>()->elem);
    }
    return false;
}

std::string shape_str(const std::vector<PrimExpr>& shape) {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) os << ", ";
        if (auto* v = as_const_int(shape[i])) {
            os << *v;
        } else {
            os << shape[i];
        }
    }
    if (shape.size() == 1) os << ",";
    os << ")";
    return os.str();
}

std::string type_str(const Type& t) {
    if (!t.defined()) return "?";
    std::ostringstream os;
    switch (t->kind) {
        case TypeKind::TensorType: {
            auto* tt = t.as<TensorType>();
            os << "Tensor[" << shape_str(tt->shape) << ", " << tt->dtype.str() << "]";
            break;
        }
        case TypeKind::TupleType: {
            auto* tt = t.as<TupleType>();
            os << "(";
            for (size_t i = 0; i < tt->fields.size(); ++i)
                os << (i ? ", " : "") << type_str(tt->fields[i]);
            if (tt->fields.size() == 1) os << ",";
            os << ")";
            break;
        }
        case TypeKind::FuncType: {
            auto* ft = t.as<FuncType>();
            os << "fn (";
            for (size_t i = 0; i < ft->params.size(); ++i)
                os << (i ? ", " : "") << type_str(ft->params[i]);
            os << ") -> " << type_str(ft->ret);
            break;
        }
        case TypeKind::SequenceType: {
            auto* st = t.as<SequenceType>();
            os << "Sequence[";
            if (st->empty) {
                os << "empty";
            } else if (!st->dims) {
                os << "?";
            } else {
                os << "(";
                for (size_t i = 0; i < st->dims->size(); ++i) {
                    int64_t d = (*st->dims)[i];
                    os << (i ? ", " : "");
                    if (d == SequenceType::kAnyDim) {
                        os << "?";
                    } else {
                        os << d;
                    }
                }
                os << (st->dims->size() == 1 ? ",)" : ")");
            }
            os << ", " << st->dtype.str() << "]";
            break;
        }
        case TypeKind::OptionalType:
            os << "Optional[" << type_str(t.as<OptionalType>()->elem) << "]";
            break;
    }
    return os.str();
}

const TensorType& expect_tensor(const Type& t, const SourceLoc& loc, const std::string& what) {
    if (auto* tt = t.as<TensorType>()) return *tt;
    user_error(loc) << what << " must be a tensor, but has type " << type_str(t);
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::graph
