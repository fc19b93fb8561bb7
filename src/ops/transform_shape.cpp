// Layout ops that move whole elements without looking at them: reshape, flatten, transpose,
// squeeze, expand_dims, concatenate, split, broadcast_to, tile, depth_to_space, space_to_depth.
// All are Injective (each output element reads one input element at a computable index) and
// use the injective schedule.
#include <algorithm>
#include <numeric>
#include <optional>

#include "graph/op.h"
#include "ir/analyzer.h"
#include "ir/polynomial.h"
#include "ir/structural_equal.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "ops/transform.h"
#include "support/error.h"
#include "te/math.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::TensorType;
using graph::Type;

namespace {

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

bool dims_equal(const PrimExpr& a, const PrimExpr& b) {
    return structural_equal(simplify(a), simplify(b));
}

// out[i] = x[the element at the same row-major position]: reshape and flatten.
te::Tensor reshape_to(const te::Tensor& x, const std::vector<PrimExpr>& shape,
                      const std::string& name) {
    return te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            return x(unravel_index(ravel_index(to_vector(i), shape), x.shape()));
        },
        name);
}

// ---- reshape / flatten --------------------------------------------------------------------

Type reshape_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                  const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = attrs_as<ReshapeAttrs>(attrs);
    std::vector<PrimExpr> out;
    std::optional<size_t> infer;
    std::vector<PrimExpr> target = a.dims;
    if (target.empty()) {
        for (int64_t v : a.newshape) target.push_back(i64(v));
    }
    for (size_t i = 0; i < target.size(); ++i) {
        const int64_t* value = as_const_int(target[i]);
        if (!value) {
            out.push_back(target[i]);
            continue;
        }
        int64_t v = *value;
        if (v == 0 && !a.allowzero) {
            if (i >= x.ndim()) {
                user_error(loc) << op.name << ": newshape[" << i << "] is 0 (copy the input's "
                                << "dimension) but the input " << shape_str(x.shape) << " has only "
                                << x.ndim() << " dimensions";
            }
            out.push_back(x.shape[i]);
        } else if (v == -1) {
            if (infer) {
                user_error(loc) << op.name << ": newshape " << list_str(a.newshape) << " has -1 at "
                                << *infer << " and " << i << "; at most one may be inferred";
            }
            infer = i;
            out.push_back(PrimExpr());
        } else if (v < -1) {
            user_error(loc) << op.name << ": newshape[" << i << "] is " << v
                            << "; dimensions are >= 0, or -1 to infer";
        } else {
            out.push_back(i64(v));
        }
    }
    PrimExpr total = shape_product(x.shape);
    std::vector<PrimExpr> known;
    for (const auto& d : out) {
        if (d.defined()) known.push_back(d);
    }
    PrimExpr known_total = shape_product(known);
    auto t = static_dim(total), k = static_dim(known_total);
    if (infer) {
        if (t && k) {
            if (*k == 0 || *t % *k != 0) {
                user_error(loc) << op.name << ": cannot reshape " << shape_str(x.shape) << " ("
                                << *t << " elements) with a -1 beside dimensions totalling " << *k
                                << " elements";
            }
            out[*infer] = i64(*t / *k);
        } else {
            if (!is_zero(simplify(floormod(total, known_total)))) {
                user_error(loc) << op.name << ": cannot show that the -1 of " << shape_str(target)
                                << " divides " << shape_str(x.shape) << " evenly";
            }
            out[*infer] = simplify(floordiv(total, known_total));
        }
    } else if (t && k && *t != *k) {
        user_error(loc) << op.name << ": cannot reshape " << shape_str(x.shape) << " (" << *t
                        << " elements) into " << shape_str(out) << " (" << *k << " elements)";
    } else if (!(t && k) && !provably_equal(total, known_total)) {
        // Symbolic: the counts must be provably equal, or the kernel would read out of bounds.
        user_error(loc) << op.name << ": cannot show that " << shape_str(x.shape) << " and "
                        << shape_str(out) << " have the same number of elements";
    }
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> reshape_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                        const Type& out) {
    return {reshape_to(in[0], te_shape(out), "reshape")};
}

Type flatten_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                  const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    int64_t r = static_cast<int64_t>(x.ndim());
    int64_t axis = attrs_as<FlattenAttrs>(attrs).axis;
    if (axis < -r || axis > r) {
        user_error(loc) << op.name << ": axis " << axis << " is out of range for a tensor of " << r
                        << " dimensions (expected " << -r << " <= axis <= " << r << ")";
    }
    if (axis < 0) axis += r;
    std::vector<PrimExpr> head(x.shape.begin(), x.shape.begin() + axis);
    std::vector<PrimExpr> tail(x.shape.begin() + axis, x.shape.end());
    return graph::make_tensor_type({shape_product(head), shape_product(tail)}, x.dtype);
}

std::vector<te::Tensor> flatten_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                        const Type& out) {
    return {reshape_to(in[0], te_shape(out), "flatten")};
}

// ---- transpose ----------------------------------------------------------------------------

std::vector<int64_t> permutation(const TransposeAttrs& a, int64_t r, const SourceLoc& loc,
                                 const std::string& op) {
    if (a.axes.empty()) {
        std::vector<int64_t> p(r);
        for (int64_t i = 0; i < r; ++i) p[i] = r - 1 - i;
        return p;
    }
    if (static_cast<int64_t>(a.axes.size()) != r) {
        user_error(loc) << op << ": axes has " << a.axes.size() << " entries for a tensor of " << r
                        << " dimensions";
    }
    return normalize_axes(a.axes, r, loc, op);
}

Type transpose_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                    const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    auto p =
        permutation(attrs_as<TransposeAttrs>(attrs), static_cast<int64_t>(x.ndim()), loc, op.name);
    std::vector<PrimExpr> out;
    for (int64_t a : p) out.push_back(x.shape[a]);
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> transpose_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                          const Type& out) {
    te::Tensor x = in[0];
    auto p = permutation(attrs_as<TransposeAttrs>(attrs), static_cast<int64_t>(x.ndim()), {},
                         "transpose");
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.size());
            for (size_t k = 0; k < p.size(); ++k) idx[p[k]] = i[k];
            return x(idx);
        },
        "transpose")};
}

// ---- squeeze / expand_dims ----------------------------------------------------------------

// For each input axis, whether squeeze removes it.
std::vector<bool> squeezed_axes(const TensorType& x, const SqueezeAttrs& a, const SourceLoc& loc,
                                const std::string& op) {
    std::vector<bool> drop(x.ndim(), false);
    if (a.axes.empty()) {
        for (size_t d = 0; d < x.ndim(); ++d) drop[d] = is_one(x.shape[d]);
        return drop;
    }
    for (int64_t axis : normalize_axes(a.axes, static_cast<int64_t>(x.ndim()), loc, op)) {
        if (!is_one(x.shape[axis])) {
            user_error(loc) << op << ": axis " << axis << " of " << shape_str(x.shape)
                            << " has size " << dim_str(x.shape[axis]) << ", not 1";
        }
        drop[axis] = true;
    }
    return drop;
}

Type squeeze_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                  const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    auto drop = squeezed_axes(x, attrs_as<SqueezeAttrs>(attrs), loc, op.name);
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < x.ndim(); ++d) {
        if (!drop[d]) out.push_back(x.shape[d]);
    }
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> squeeze_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                        const Type& out) {
    te::Tensor x = in[0];
    auto drop = squeezed_axes(*graph::make_tensor_type(x.shape(), x.dtype()).as<TensorType>(),
                              attrs_as<SqueezeAttrs>(attrs), {}, "squeeze");
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx;
            size_t next = 0;
            for (bool d : drop) idx.push_back(d ? PrimExpr(0) : i[next++]);
            return x(idx);
        },
        "squeeze")};
}

int64_t expand_axis(const ExpandDimsAttrs& a, int64_t r, const SourceLoc& loc,
                    const std::string& op) {
    // Far more axes than any tensor has is a corrupt attribute, not a shape to build.
    constexpr int64_t kMaxNewAxes = 1024;
    if (a.num_newaxis < 0 || a.num_newaxis > kMaxNewAxes) {
        user_error(loc) << op << ": num_newaxis is " << a.num_newaxis << "; it must be in [0, "
                        << kMaxNewAxes << "]";
    }
    return normalize_axis(a.axis, r + 1, loc, op);
}

Type expand_dims_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                      const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = attrs_as<ExpandDimsAttrs>(attrs);
    int64_t axis = expand_axis(a, static_cast<int64_t>(x.ndim()), loc, op.name);
    std::vector<PrimExpr> out(x.shape.begin(), x.shape.begin() + axis);
    for (int64_t k = 0; k < a.num_newaxis; ++k) out.push_back(i64(1));
    out.insert(out.end(), x.shape.begin() + axis, x.shape.end());
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> expand_dims_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                            const Type& out) {
    te::Tensor x = in[0];
    const auto& a = attrs_as<ExpandDimsAttrs>(attrs);
    int64_t axis = expand_axis(a, static_cast<int64_t>(x.ndim()), {}, "expand_dims");
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.begin() + axis);
            idx.insert(idx.end(), i.begin() + axis + a.num_newaxis, i.end());
            return x(idx);
        },
        "expand_dims")};
}

// ---- concatenate / split ------------------------------------------------------------------

Type concatenate_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                      const SourceLoc& loc) {
    if (args.empty()) user_error(loc) << op.name << " needs at least one input";
    const auto& first = graph::expect_tensor(args[0], loc, "input 0 of " + op.name);
    int64_t r = static_cast<int64_t>(first.ndim());
    int64_t axis = normalize_axis(attrs_as<ConcatenateAttrs>(attrs).axis, r, loc, op.name);
    std::vector<PrimExpr> out = first.shape;
    for (size_t k = 1; k < args.size(); ++k) {
        std::string what = "input " + std::to_string(k) + " of " + op.name;
        const auto& t = graph::expect_tensor(args[k], loc, what);
        if (t.dtype != first.dtype) {
            user_error(loc) << op.name << ": input " << k << " has type " << t.dtype.str()
                            << " but input 0 has " << first.dtype.str();
        }
        if (static_cast<int64_t>(t.ndim()) != r) {
            user_error(loc) << op.name << ": input " << k << " " << shape_str(t.shape) << " has "
                            << t.ndim() << " dimensions but input 0 " << shape_str(first.shape)
                            << " has " << r;
        }
        for (int64_t d = 0; d < r; ++d) {
            if (d == axis) continue;
            if (!dims_equal(t.shape[d], first.shape[d])) {
                user_error(loc) << op.name << ": input " << k << " " << shape_str(t.shape)
                                << " differs from input 0 " << shape_str(first.shape) << " in axis "
                                << d << " (only axis " << axis << " may differ)";
            }
        }
        out[axis] = simplify(out[axis] + t.shape[axis]);
    }
    return graph::make_tensor_type(out, first.dtype);
}

std::vector<te::Tensor> concatenate_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                            const Type& out) {
    int64_t axis = attrs_as<ConcatenateAttrs>(attrs).axis;
    if (axis < 0) axis += static_cast<int64_t>(in[0].ndim());
    std::vector<PrimExpr> offsets{make_int(DataType::int32(), 0)};
    for (const auto& t : in) offsets.push_back(simplify(offsets.back() + t.shape()[axis]));
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            auto read = [&](size_t k) {
                std::vector<PrimExpr> idx = to_vector(i);
                idx[axis] = idx[axis] - offsets[k];
                return in[k](idx);
            };
            // Only the chosen input is read: the others are out of bounds there.
            PrimExpr value = read(in.size() - 1);
            for (size_t k = in.size() - 1; k-- > 0;) {
                value = te::if_then_else(i[axis] < offsets[k + 1], read(k), value);
            }
            return value;
        },
        "concatenate")};
}

// The [begin, end) ranges of split's parts along an axis of `n` elements.
std::vector<std::pair<int64_t, int64_t>> split_ranges(const SplitAttrs& a, int64_t n,
                                                      const SourceLoc& loc, const std::string& op) {
    std::vector<std::pair<int64_t, int64_t>> parts;
    if (!a.indices.empty()) {
        int64_t prev = 0;
        for (size_t k = 0; k < a.indices.size(); ++k) {
            int64_t v = a.indices[k];
            if (v < prev || v > n) {
                user_error(loc) << op << ": indices[" << k << "] = " << v << " is not in [" << prev
                                << ", " << n << "] (split points ascend within the axis)";
            }
            parts.emplace_back(prev, v);
            prev = v;
        }
        parts.emplace_back(prev, n);
        return parts;
    }
    if (a.sections <= 0 || a.sections > n) {
        user_error(loc) << op << ": sections is " << a.sections << "; give 1 to " << n
                        << " sections for an axis of " << n << " elements, or indices";
    }
    int64_t chunk = (n + a.sections - 1) / a.sections;
    for (int64_t b = 0; b < n; b += chunk) parts.emplace_back(b, std::min(n, b + chunk));
    if (static_cast<int64_t>(parts.size()) != a.sections) {
        user_error(loc) << op << ": " << n << " elements do not split into " << a.sections
                        << " sections of " << chunk << " (the last one smaller)";
    }
    return parts;
}

Type split_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = attrs_as<SplitAttrs>(attrs);
    int64_t axis = normalize_axis(a.axis, static_cast<int64_t>(x.ndim()), loc, op.name);
    auto n = static_dim(x.shape[axis]);
    if (!n) {
        user_error(loc) << op.name << ": axis " << axis << " of " << shape_str(x.shape)
                        << " must be static";
    }
    std::vector<Type> fields;
    for (auto [b, e] : split_ranges(a, *n, loc, op.name)) {
        std::vector<PrimExpr> shape = x.shape;
        shape[axis] = i64(e - b);
        fields.push_back(graph::make_tensor_type(shape, x.dtype));
    }
    return graph::make_tuple_type(fields);
}

std::vector<te::Tensor> split_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                      const Type& out) {
    te::Tensor x = in[0];
    const auto& a = attrs_as<SplitAttrs>(attrs);
    int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(x.ndim()) : a.axis;
    const auto& fields = out.as<graph::TupleType>()->fields;
    auto ranges = split_ranges(a, *as_const_int(x.shape()[axis]), {}, "split");
    std::vector<te::Tensor> parts;
    for (size_t k = 0; k < fields.size(); ++k) {
        int64_t begin = ranges[k].first;
        parts.push_back(te::compute(
            te_shape(fields[k]),
            [&](std::span<const PrimExpr> i) {
                std::vector<PrimExpr> idx = to_vector(i);
                idx[axis] = idx[axis] + make_int(DataType::int32(), begin);
                return x(idx);
            },
            "split"));
    }
    return parts;
}

// ---- broadcast_to / tile ------------------------------------------------------------------

Type broadcast_to_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                       const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = attrs_as<BroadcastToAttrs>(attrs);
    if (!a.dims.empty()) {
        // A run-time shape: each input dimension is 1 (broadcast) or the result's.
        if (a.dims.size() < x.ndim()) {
            user_error(loc) << op.name << ": cannot broadcast " << shape_str(x.shape) << " to the "
                            << a.dims.size() << "-D shape " << shape_str(a.dims);
        }
        size_t offset = a.dims.size() - x.ndim();
        for (size_t d = 0; d < x.ndim(); ++d) {
            if (!is_one(x.shape[d]) && !provably_equal(x.shape[d], a.dims[d + offset])) {
                user_error(loc) << op.name << ": cannot broadcast " << shape_str(x.shape) << " to "
                                << shape_str(a.dims) << " (dimension " << d << ")";
            }
        }
        return graph::make_tensor_type(a.dims, x.dtype);
    }
    std::vector<PrimExpr> target;
    for (int64_t d : a.shape) {
        if (d < 0) user_error(loc) << op.name << ": shape has a negative dimension " << d;
        target.push_back(i64(d));
    }
    return graph::make_tensor_type(broadcast_shape({x.shape, target}, loc, op.name), x.dtype);
}

std::vector<te::Tensor> broadcast_to_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                             const Type& out) {
    te::Tensor x = in[0];
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) { return x(broadcast_index(x.shape(), i)); },
        "broadcast_to")};
}

Type tile_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
               const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = attrs_as<TileAttrs>(attrs);
    std::vector<PrimExpr> reps = a.symbolic_reps;
    if (reps.empty()) {
        for (int64_t rep : a.reps) {
            if (rep < 1)
                user_error(loc) << op.name << ": reps has " << rep << "; each must be >= 1";
            reps.push_back(i64(rep));
        }
    }
    size_t r = std::max(reps.size(), x.ndim());
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < r; ++d) {
        PrimExpr rep = d + reps.size() < r ? i64(1) : reps[d + reps.size() - r];
        PrimExpr dim = d + x.ndim() < r ? i64(1) : x.shape[d + x.ndim() - r];
        out.push_back(simplify(dim * rep));
    }
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> tile_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                     const Type& out) {
    te::Tensor x = in[0];
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            size_t offset = i.size() - x.ndim();
            std::vector<PrimExpr> idx;
            for (size_t d = 0; d < x.ndim(); ++d) {
                idx.push_back(floormod(i[d + offset], x.shape()[d]));
            }
            return x(idx);
        },
        "tile")};
}

// ---- depth_to_space / space_to_depth ------------------------------------------------------

const TensorType& expect_nchw(const std::vector<Type>& args, int64_t blocksize, const Op& op,
                              const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    if (x.ndim() != 4) {
        user_error(loc) << op.name << " needs an NCHW tensor (4 dimensions), got "
                        << shape_str(x.shape);
    }
    if (blocksize < 1) user_error(loc) << op.name << ": blocksize " << blocksize << " is < 1";
    return x;
}

void check_divisible(const PrimExpr& dim, int64_t by, const char* axis, const TensorType& x,
                     const Op& op, const SourceLoc& loc) {
    auto v = static_dim(dim);
    if (v && *v % by != 0) {
        user_error(loc) << op.name << ": " << axis << " " << *v << " of " << shape_str(x.shape)
                        << " is not a multiple of " << by;
    }
}

Type depth_to_space_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                         const SourceLoc& loc) {
    const auto& a = attrs_as<DepthToSpaceAttrs>(attrs);
    const auto& x = expect_nchw(args, a.blocksize, op, loc);
    if (a.mode != "DCR" && a.mode != "CRD") {
        user_error(loc) << op.name << ": mode must be \"DCR\" or \"CRD\", got \"" << a.mode << "\"";
    }
    int64_t b = a.blocksize;
    check_divisible(x.shape[1], b * b, "channels", x, op, loc);
    return graph::make_tensor_type({x.shape[0], simplify(floordiv(x.shape[1], i64(b * b))),
                                    simplify(x.shape[2] * i64(b)), simplify(x.shape[3] * i64(b))},
                                   x.dtype);
}

std::vector<te::Tensor> depth_to_space_compute(const std::vector<te::Tensor>& in,
                                               const Attrs& attrs, const Type& out) {
    te::Tensor x = in[0];
    const auto& a = attrs_as<DepthToSpaceAttrs>(attrs);
    PrimExpr b = make_int(DataType::int32(), a.blocksize);
    auto shape = te_shape(out);
    PrimExpr c_out = shape[1];
    bool dcr = a.mode == "DCR";
    return {te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            PrimExpr bh = floormod(i[2], b), bw = floormod(i[3], b);
            PrimExpr c = dcr ? (bh * b + bw) * c_out + i[1] : (i[1] * b + bh) * b + bw;
            return x(i[0], c, floordiv(i[2], b), floordiv(i[3], b));
        },
        "depth_to_space")};
}

Type space_to_depth_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                         const SourceLoc& loc) {
    int64_t b = attrs_as<SpaceToDepthAttrs>(attrs).blocksize;
    const auto& x = expect_nchw(args, b, op, loc);
    check_divisible(x.shape[2], b, "height", x, op, loc);
    check_divisible(x.shape[3], b, "width", x, op, loc);
    return graph::make_tensor_type(
        {x.shape[0], simplify(x.shape[1] * i64(b * b)), simplify(floordiv(x.shape[2], i64(b))),
         simplify(floordiv(x.shape[3], i64(b)))},
        x.dtype);
}

std::vector<te::Tensor> space_to_depth_compute(const std::vector<te::Tensor>& in,
                                               const Attrs& attrs, const Type& out) {
    te::Tensor x = in[0];
    PrimExpr b = make_int(DataType::int32(), attrs_as<SpaceToDepthAttrs>(attrs).blocksize);
    PrimExpr c_in = x.shape()[1];
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            // Output channel (bh * b + bw) * C + c.
            PrimExpr c = floormod(i[1], c_in), block = floordiv(i[1], c_in);
            PrimExpr bh = floordiv(block, b), bw = floormod(block, b);
            return x(i[0], c, i[2] * b + bh, i[3] * b + bw);
        },
        "space_to_depth")};
}

}  // namespace

Ref<Op> make_reshape_op() {
    return make_op(
        {.name = "reshape",
         .num_inputs = 1,
         .make_default_attrs = default_attrs<ReshapeAttrs>,
         .infer_type = reshape_type,
         .compute = reshape_compute,
         .schedule = schedule_injective,
         .pattern = OpPattern::Injective,
         .description = "same elements in a new shape (ONNX Reshape: 0 copies, -1 infers)"});
}

Ref<Op> make_flatten_op() {
    return make_op({.name = "flatten",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<FlattenAttrs>,
                    .infer_type = flatten_type,
                    .compute = flatten_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "to 2-D at axis (ONNX Flatten)"});
}

Ref<Op> make_transpose_op() {
    return make_op({.name = "transpose",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<TransposeAttrs>,
                    .infer_type = transpose_type,
                    .compute = transpose_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "permute axes"});
}

Ref<Op> make_squeeze_op() {
    return make_op({.name = "squeeze",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<SqueezeAttrs>,
                    .infer_type = squeeze_type,
                    .compute = squeeze_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "remove size-1 axes"});
}

Ref<Op> make_expand_dims_op() {
    return make_op({.name = "expand_dims",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ExpandDimsAttrs>,
                    .infer_type = expand_dims_type,
                    .compute = expand_dims_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "insert size-1 axes"});
}

Ref<Op> make_concatenate_op() {
    return make_op({.name = "concatenate",
                    .num_inputs = -1,
                    .make_default_attrs = default_attrs<ConcatenateAttrs>,
                    .infer_type = concatenate_type,
                    .compute = concatenate_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "join N tensors along axis"});
}

Ref<Op> make_split_op() {
    return make_op({.name = "split",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<SplitAttrs>,
                    .infer_type = split_type,
                    .compute = split_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "cut along axis into a tuple of tensors"});
}

Ref<Op> make_broadcast_to_op() {
    return make_op({.name = "broadcast_to",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<BroadcastToAttrs>,
                    .infer_type = broadcast_to_type,
                    .compute = broadcast_to_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "numpy-broadcast to a shape (ONNX Expand)"});
}

Ref<Op> make_tile_op() {
    return make_op({.name = "tile",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<TileAttrs>,
                    .infer_type = tile_type,
                    .compute = tile_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "repeat the whole tensor reps times per axis (numpy.tile)"});
}

Ref<Op> make_depth_to_space_op() {
    return make_op({.name = "depth_to_space",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<DepthToSpaceAttrs>,
                    .infer_type = depth_to_space_type,
                    .compute = depth_to_space_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "channel blocks to spatial blocks (NCHW)"});
}

Ref<Op> make_space_to_depth_op() {
    return make_op({.name = "space_to_depth",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<SpaceToDepthAttrs>,
                    .infer_type = space_to_depth_type,
                    .compute = space_to_depth_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "spatial blocks to channel blocks (NCHW)"});
}

}  // namespace anvil::ops
