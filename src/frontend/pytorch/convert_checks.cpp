// Converters of what models compute only to check their inputs and choose a code path, all
// decided at import time: `x.dim() in (1, 2)`, the strings of error messages (format, str,
// find), and the flags fast paths test (torch.is_grad_enabled(), x.requires_grad, x.is_cuda,
// x.is_nested, ...). An imported model runs for inference on the CPU with plain tensors: no
// gradients, no autocast, no nested, sparse or quantized tensors.
#include <sstream>

#include "frontend/pytorch/convert_ops.h"
#include "ir/analyzer.h"

namespace anvil::frontend::pytorch {

namespace {

// Whether two import-time values are equal; nullopt when it cannot be known at import time.
std::optional<bool> equal_values(const PtValue& a, const PtValue& b) {
    if (a.kind == PtValue::Str || b.kind == PtValue::Str) {
        return a.kind == b.kind && a.str == b.str;
    }
    if (!a.is_import_time() || !b.is_import_time()) return std::nullopt;
    bool is_float = a.kind == PtValue::Float || b.kind == PtValue::Float;
    DataType t = is_float ? DataType::float64() : DataType::int64();
    PrimExpr e = simplify(eq(cast(t, a.scalar), cast(t, b.scalar)));
    if (const int64_t* v = as_const_int(e)) return *v != 0;
    return std::nullopt;
}

// A value as Python's str() writes it, for messages.
std::string text_of(const PtValue& v) {
    switch (v.kind) {
        case PtValue::Str:
        case PtValue::Device:
            return v.str;
        case PtValue::None:
            return "None";
        case PtValue::Int:
        case PtValue::Float:
        case PtValue::Bool: {
            if (!v.is_import_time()) return "<a value computed at run time>";
            PrimExpr s = simplify(v.scalar);
            std::ostringstream out;
            if (const int64_t* i = as_const_int(s)) {
                if (v.kind == PtValue::Bool) return *i ? "True" : "False";
                out << *i;
            } else if (const auto* f = s.as<FloatImm>()) {
                out << f->value;
            } else {
                out << s;
            }
            return out.str();
        }
        case PtValue::List:
        case PtValue::Tuple: {
            std::string s = v.kind == PtValue::List ? "[" : "(";
            for (size_t k = 0; k < v.items.size(); ++k) {
                s += (k ? ", " : "") + text_of(v.items[k]);
            }
            if (v.kind == PtValue::Tuple && v.items.size() == 1) s += ",";
            return s + (v.kind == PtValue::List ? "]" : ")");
        }
        case PtValue::Tensor:
            return "<tensor>";
        case PtValue::Unknown:
            return "?";
    }
    return "?";
}

}  // namespace

// `item in list`, for lists known at import time.
PtValues convert_contains(PtContext& ctx) {
    const PtValue& list = ctx.input(0);
    if (list.kind != PtValue::List && list.kind != PtValue::Tuple) {
        ctx.error() << "'in' of a " << kind_name(list.kind)
                    << " is not supported (lists and tuples only)";
    }
    const PtValue& item = ctx.input(1);
    for (const auto& v : list.items) {
        std::optional<bool> same = equal_values(v, item);
        if (!same) {
            ctx.error() << "whether " << text_of(item) << " is in " << text_of(list)
                        << " is not known at import time";
        }
        if (*same) return {PtValue::of_bool(true)};
    }
    return {PtValue::of_bool(false)};
}

// "...{}...".format(args...): Python's replacement of each {} (the strings of messages).
PtValues convert_format(PtContext& ctx) {
    std::string f = ctx.str_arg(0), out;
    size_t next = 1;
    for (size_t i = 0; i < f.size(); ++i) {
        if (f[i] == '{' && i + 1 < f.size() && f[i + 1] == '{') {
            out += '{';
            ++i;
        } else if (f[i] == '}' && i + 1 < f.size() && f[i + 1] == '}') {
            out += '}';
            ++i;
        } else if (f[i] == '{') {
            size_t close = f.find('}', i);
            if (close == std::string::npos) break;
            out += next < ctx.num_inputs() ? text_of(ctx.input(next++)) : "";
            i = close;
        } else {
            out += f[i];
        }
    }
    return {PtValue::of_str(out)};
}

PtValues convert_str(PtContext& ctx) {
    return {PtValue::of_str(text_of(ctx.input(0)))};
}

// s.find(sub, start=0, end=-1) as TorchScript defines it (end -1: the string's end).
PtValues convert_find(PtContext& ctx) {
    std::string s = ctx.str_arg(0), sub = ctx.str_arg(1);
    auto n = static_cast<int64_t>(s.size());
    int64_t start = ctx.num_inputs() > 2 ? ctx.int_arg(2) : 0;
    int64_t end = ctx.num_inputs() > 3 ? ctx.int_arg(3) : -1;
    if (start < 0) start = std::max<int64_t>(0, start + n);
    if (end < 0) end = std::max<int64_t>(0, end + n + 1);
    end = std::min(end, n);
    if (start > end) return {PtValue::of_int(-1)};
    size_t at = s.substr(static_cast<size_t>(start), static_cast<size_t>(end - start)).find(sub);
    return {PtValue::of_int(at == std::string::npos ? -1 : start + static_cast<int64_t>(at))};
}

// list(l): a copy (lists are values here).
PtValues convert_list(PtContext& ctx) {
    const PtValue& v = ctx.input(0);
    if (v.kind == PtValue::Str) {
        PtValues chars;
        for (char c : v.str) chars.push_back(PtValue::of_str(std::string(1, c)));
        return {PtValue::of_list(std::move(chars))};
    }
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) {
        ctx.error() << "list() of a " << kind_name(v.kind);
    }
    return {PtValue::of_list(v.items)};
}

// Flags that are false for an imported model: gradients, autocast, and tensors that are on a
// device, nested, sparse, quantized, ... (the operand is checked to be a tensor).
PtValues convert_false_flag(PtContext& ctx) {
    if (ctx.num_inputs() > 0) ctx.tensor(0);
    return {PtValue::of_bool(false)};
}

PtValues convert_is_floating_point(PtContext& ctx) {
    return {PtValue::of_bool(ctx.tensor_type(ctx.tensor(0), "the operand").dtype.is_floating())};
}

}  // namespace anvil::frontend::pytorch
