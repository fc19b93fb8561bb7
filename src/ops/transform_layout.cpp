// layout_transform: between layouts of the same primal axes, such as NCHW and the channel-blocked
// NCHW16c the x86 convolutions read and write (graph pass alter_op_layout inserts these at the
// edges of a blocked region), or OIHW and the packed OIHW8i16o weight. Injective; the injective
// schedule.
#include <algorithm>
#include <optional>

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "ops/transform.h"
#include "support/error.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

// One axis of a layout string: a primal axis ('C') or a block of one ('16c': primal 'C',
// block 16).
struct LayoutAxis {
    char primal;
    int64_t block = 0;  // 0: the primal axis itself
};

struct Layout {
    std::vector<LayoutAxis> axes;

    // Position of the primal axis `p` (block == false) or of its block.
    std::optional<size_t> find(char p, bool block) const {
        for (size_t i = 0; i < axes.size(); ++i) {
            if (axes[i].primal == p && (axes[i].block > 0) == block) return i;
        }
        return std::nullopt;
    }
    int64_t block_of(char p) const {
        auto b = find(p, true);
        return b ? axes[*b].block : 0;
    }
};

bool is_upper(char c) {
    return c >= 'A' && c <= 'Z';
}
bool is_lower(char c) {
    return c >= 'a' && c <= 'z';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

Layout parse_layout(const std::string& text, const SourceLoc& loc, const std::string& op,
                    const char* which) {
    Layout l;
    auto fail = [&](const std::string& why) {
        user_error(loc) << op << ": " << which << " '" << text << "' is not a layout (" << why
                        << "; expected axes like NCHW or NCHW16c)";
    };
    if (text.empty()) fail("empty");
    for (size_t i = 0; i < text.size();) {
        int64_t block = 0;
        size_t digits = i;
        while (i < text.size() && is_digit(text[i])) {
            block = block * 10 + (text[i] - '0');
            if (block > (int64_t{1} << 30)) fail("block too large");
            ++i;
        }
        if (i == text.size()) fail("a number must be followed by a lower-case axis");
        char c = text[i++];
        bool numbered = i - 1 > digits;
        if (is_upper(c)) {
            if (numbered) fail(std::string("a primal axis (") + c + ") takes no block size");
            if (l.find(c, false)) fail(std::string("axis ") + c + " appears twice");
            l.axes.push_back({c, 0});
        } else if (is_lower(c)) {
            char p = static_cast<char>(c - 'a' + 'A');
            if (!numbered || block == 0) fail(std::string("block ") + c + " needs a size > 0");
            if (l.find(p, true)) fail(std::string("block ") + c + " appears twice");
            l.axes.push_back({p, block});
        } else {
            fail(std::string("unexpected character '") + c + "'");
        }
    }
    for (const auto& a : l.axes) {
        if (a.block > 0 && !l.find(a.primal, false)) {
            fail(std::string("block of ") + a.primal + " without the axis " + a.primal);
        }
    }
    return l;
}

struct LayoutPair {
    Layout src, dst;
};

LayoutPair parse_pair(const LayoutTransformAttrs& a, const SourceLoc& loc, const std::string& op) {
    LayoutPair p{parse_layout(a.src_layout, loc, op, "src_layout"),
                 parse_layout(a.dst_layout, loc, op, "dst_layout")};
    auto primals = [](const Layout& l) {
        std::string s;
        for (const auto& x : l.axes) {
            if (x.block == 0) s += x.primal;
        }
        std::sort(s.begin(), s.end());
        return s;
    };
    if (primals(p.src) != primals(p.dst)) {
        user_error(loc) << op << ": " << a.src_layout << " and " << a.dst_layout
                        << " do not have the same axes";
    }
    return p;
}

Type layout_transform_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                           const SourceLoc& loc) {
    const auto& a = attrs_as<LayoutTransformAttrs>(attrs);
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    LayoutPair p = parse_pair(a, loc, op.name);
    if (x.ndim() != p.src.axes.size()) {
        user_error(loc) << op.name << ": the input " << graph::type_str(args[0]) << " has "
                        << x.ndim() << " dimensions, the layout " << a.src_layout << " "
                        << p.src.axes.size();
    }
    std::vector<PrimExpr> out;
    for (const auto& d : p.dst.axes) {
        const PrimExpr& outer = x.shape[*p.src.find(d.primal, false)];
        int64_t src_block = p.src.block_of(d.primal);
        if (src_block > 0) {
            auto inner = static_dim(x.shape[*p.src.find(d.primal, true)]);
            if (inner != src_block) {
                user_error(loc) << op.name << ": the block of " << d.primal << " in "
                                << graph::type_str(args[0]) << " is not " << src_block << " ("
                                << a.src_layout << ")";
            }
        }
        if (d.block > 0) {
            out.push_back(make_int(outer.dtype(), d.block));
            continue;
        }
        int64_t dst_block = p.dst.block_of(d.primal);
        if (dst_block == 0) {
            auto v = static_dim(outer);
            if (src_block == 0) {
                out.push_back(outer);
            } else if (v) {
                out.push_back(make_int(outer.dtype(), *v * src_block));
            } else {
                out.push_back(outer * make_int(outer.dtype(), src_block));
            }
            continue;
        }
        auto v = static_dim(outer);
        int64_t extent = v ? *v * std::max<int64_t>(src_block, 1) : -1;
        if (extent < 0 || extent % dst_block != 0) {
            user_error(loc) << op.name << ": axis " << d.primal << " of "
                            << graph::type_str(args[0]) << " (" << a.src_layout
                            << ") must be a static multiple of the block " << dst_block << " of "
                            << a.dst_layout;
        }
        out.push_back(make_int(outer.dtype(), extent / dst_block));
    }
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> layout_transform_compute(const std::vector<te::Tensor>& in,
                                                 const Attrs& attrs, const Type& out) {
    const auto& a = attrs_as<LayoutTransformAttrs>(attrs);
    LayoutPair p = parse_pair(a, {}, "layout_transform");
    const te::Tensor& x = in[0];
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            // The primal coordinate of each axis, then the source index that holds it.
            auto primal = [&](char c) {
                PrimExpr v = i[*p.dst.find(c, false)];
                if (int64_t b = p.dst.block_of(c)) {
                    v = v * make_int(v.dtype(), b) + i[*p.dst.find(c, true)];
                }
                return v;
            };
            std::vector<PrimExpr> at;
            for (const auto& s : p.src.axes) {
                PrimExpr v = primal(s.primal);
                int64_t b = p.src.block_of(s.primal);
                if (b == 0) {
                    at.push_back(v);
                } else if (s.block == 0) {
                    at.push_back(floordiv(v, make_int(v.dtype(), b)));
                } else {
                    at.push_back(floormod(v, make_int(v.dtype(), b)));
                }
            }
            return x(at);
        },
        "layout_transform")};
}

}  // namespace

int64_t nchw_channel_block(const std::string& layout, const SourceLoc& loc, const std::string& op) {
    Layout l = parse_layout(layout, loc, op, "layout");
    std::string primals;
    for (size_t i = 0; i < l.axes.size() && i < 4; ++i) primals += l.axes[i].primal;
    bool nchw = primals == "NCHW" && l.axes.size() <= 5 && l.block_of('N') == 0 &&
                l.block_of('H') == 0 && l.block_of('W') == 0;
    bool blocked_last = l.axes.size() == 4 || l.axes[4].block > 0;
    if (!nchw || !blocked_last) {
        user_error(loc) << op << ": layout '" << layout << "' is neither NCHW nor NCHW<b>c";
    }
    return l.block_of('C');
}

Ref<Op> make_layout_transform_op() {
    return make_op({.name = "layout_transform",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<LayoutTransformAttrs>,
                    .infer_type = layout_transform_type,
                    .compute = layout_transform_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "between layouts of the same axes (NCHW <-> NCHW16c)"});
}

}  // namespace anvil::ops
