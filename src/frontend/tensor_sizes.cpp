// Sizes the model declares or its shapes compute, checked before anything is allocated or
// lowered: a dimension must not be negative, and a tensor's element count and byte size must fit
// in 64 bits (signed, as every size downstream is). A hostile model states such sizes on
// purpose; without the check they wrap around into small or negative sizes later, where the
// error (or the silently wrong buffer) no longer names the model.
#include "frontend/tensor_sizes.h"

#include <limits>

#include "frontend/node_builder.h"

namespace anvil::frontend {

std::optional<int64_t> checked_byte_size(std::span<const int64_t> shape, DataType dtype) {
    int64_t count = 1;
    for (int64_t d : shape) {
        if (d < 0 || __builtin_mul_overflow(count, d, &count)) return std::nullopt;
    }
    int64_t bytes = 0;
    // A byte size must also leave room for the runtime's rounding up to its alignment.
    int64_t element = std::max<int64_t>(dtype.bytes(), 1) * std::max<int64_t>(dtype.lanes(), 1);
    if (__builtin_mul_overflow(count, element, &bytes) ||
        bytes > std::numeric_limits<int64_t>::max() / 2) {
        return std::nullopt;
    }
    return bytes;
}

void check_shape(std::span<const int64_t> shape, DataType dtype, const SourceLoc& loc,
                 const std::string& what) {
    std::vector<int64_t> dims(shape.begin(), shape.end());
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] < 0) {
            user_error(loc) << what << ": dimension " << i << " is " << dims[i]
                            << "; dimensions must not be negative";
        }
    }
    if (!checked_byte_size(shape, dtype)) {
        user_error(loc) << what << ": shape " << ints_str(dims) << " of " << dtype.str()
                        << " overflows 64 bits (its element count or byte size)";
    }
}

void check_type_sizes(const graph::Type& type, const SourceLoc& loc, const std::string& what) {
    if (const auto* t = type.as<graph::TensorType>()) {
        // Symbolic dimensions are checked when the executor binds them; the constant ones here
        // (a symbolic one counts as 1: the product only grows with it).
        std::vector<int64_t> dims;
        for (const auto& d : t->shape) {
            const int64_t* v = as_const_int(d);
            dims.push_back(v ? *v : 1);
        }
        check_shape(dims, t->dtype, loc, what);
    } else if (const auto* tt = type.as<graph::TupleType>()) {
        for (size_t i = 0; i < tt->fields.size(); ++i) {
            check_type_sizes(tt->fields[i], loc, what + " (item " + std::to_string(i) + ")");
        }
    } else if (const auto* o = type.as<graph::OptionalType>()) {
        check_type_sizes(o->elem, loc, what);
    } else if (const auto* s = type.as<graph::SequenceType>(); s && s->dims) {
        std::vector<int64_t> dims;
        for (int64_t d : *s->dims) {
            if (d < 0 && d != graph::SequenceType::kAnyDim) {
                user_error(loc) << what << ": a sequence of elements with dimension " << d
                                << "; dimensions must not be negative";
            }
            dims.push_back(d == graph::SequenceType::kAnyDim ? 1 : d);
        }
        check_shape(dims, s->dtype, loc, what + " (an element)");
    }
}

}  // namespace anvil::frontend
