// PtValue: a TorchScript value as the PyTorch importer holds it while converting.
//
// Tensors are graph expressions. Numbers (int, float, bool) known at import time are scalar
// expressions: constants, or for ints symbolic sizes (`x.size(0)` of an input whose dimension is
// symbolic) and arithmetic on them, so that `x.view(x.size(0), -1)` stays exact. A number known
// only at run time (`int(t.sum())`) is a 0-d tensor expression instead (`tensor` set, `scalar`
// undefined). Lists and tuples hold their items; None, strings and devices are what they say.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/expr.h"
#include "ir/expr.h"

namespace anvil::frontend::pytorch {

struct ViewOf;

// A quantized tensor's affine quantization (real = (q - zero_point) * scale), import-time
// numbers as PyTorch's quantized tensors carry them: one scale and zero point (axis -1) or one
// per index of `axis`. The tensor itself holds the integers (uint8, int8 or int32).
struct Quantization {
    std::vector<double> scales;
    std::vector<int64_t> zero_points;
    int64_t axis = -1;
};

struct PtValue {
    // Unknown: the output of a node that could not be converted (an unsupported op); whatever
    // uses it is not converted either, only checked for support, so that one error can list
    // every unsupported op of the model.
    enum Kind { None, Tensor, Int, Float, Bool, Str, Device, List, Tuple, Unknown };
    Kind kind = None;
    graph::Expr tensor;          // Tensor; a run-time Int/Float/Bool as a 0-d tensor
    PrimExpr scalar;             // an import-time Int (int64), Float (float64) or Bool (bool)
    std::string str;             // Str, Device
    std::vector<PtValue> items;  // List, Tuple
    // A Tensor that is a view of another (made by slice, select, view, ...): what an in-place op
    // on it changes (views.h).
    std::shared_ptr<const ViewOf> view;
    // A Tensor that is a quantized tensor in PyTorch: its integers' scales and zero points.
    std::shared_ptr<const Quantization> quant;

    static PtValue none() { return {}; }
    static PtValue of_tensor(graph::Expr e) {
        PtValue v;
        v.kind = Tensor;
        v.tensor = std::move(e);
        return v;
    }
    static PtValue of_quantized(graph::Expr e, Quantization q) {
        PtValue v = of_tensor(std::move(e));
        v.quant = std::make_shared<const Quantization>(std::move(q));
        return v;
    }
    static PtValue of_int(PrimExpr e) {
        PtValue v;
        v.kind = Int;
        v.scalar = std::move(e);
        return v;
    }
    static PtValue of_int(int64_t i) { return of_int(make_int(DataType::int64(), i)); }
    static PtValue of_float(double f) {
        PtValue v;
        v.kind = Float;
        v.scalar = make_float(DataType::float64(), f);
        return v;
    }
    static PtValue of_bool(bool b) {
        PtValue v;
        v.kind = Bool;
        v.scalar = make_bool(b);
        return v;
    }
    static PtValue of_str(std::string s) {
        PtValue v;
        v.kind = Str;
        v.str = std::move(s);
        return v;
    }
    static PtValue of_list(std::vector<PtValue> items, Kind kind = List) {
        PtValue v;
        v.kind = kind;
        v.items = std::move(items);
        return v;
    }
    // A number known only at run time: a 0-d tensor standing for an Int, Float or Bool.
    static PtValue of_runtime_number(Kind kind, graph::Expr e) {
        PtValue v;
        v.kind = kind;
        v.tensor = std::move(e);
        return v;
    }

    bool is_number() const { return kind == Int || kind == Float || kind == Bool; }
    // A number whose value is known at import time (possibly symbolic for ints).
    bool is_import_time() const { return is_number() && scalar.defined(); }
};

// "Tensor", "int", "List", ... for messages.
const char* kind_name(PtValue::Kind kind);

}  // namespace anvil::frontend::pytorch
