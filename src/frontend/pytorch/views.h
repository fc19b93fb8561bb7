// Writes through views. In PyTorch, `mask[0:7, 3:] = 1` or `x[:, 0].fill_(0)` changes the tensor
// the slice views; TorchScript records a view op (aten::slice, select, view, permute, ...) and
// then an in-place op on its result, which remove_mutation cannot make functional.
//
// The importer therefore remembers, for a value made by view ops from a tensor of static shape,
// which elements of that base tensor it shows: an int64 tensor of the view's shape holding each
// element's flat index in the base (`index_map`, computed by the same converters applied to the
// base's iota, so any chain of slices, selects, reshapes and permutations works; constant folding
// evaluates it at compile time). An in-place op on a view then writes its result into the base
// with scatter_elements, and later uses of the base see the new value; a view of it made before
// the write and used after it is read again from the base (the base's version tells).
#pragma once

#include <memory>
#include <string>

#include "frontend/pytorch/converter.h"

namespace anvil::frontend::pytorch {

struct ViewOf {
    int64_t base_id;         // the value id of the tensor viewed
    graph::Expr index_map;   // int64, the view's shape: flat indices into the base; or undefined
    int64_t version = 0;     // of the base when the view's value was read from it
    bool contiguous = true;  // laid out as a contiguous tensor (PyTorch's reshape copies if not)
};

// Whether `kind` (a functional kind) makes a view of its first operand; to() and type_as() are
// listed too, but make one only when they do not convert (derive_view decides).
bool is_view_kind(const std::string& kind);

// The view a view op's `result` is, given the op's converter and operands (operand 0 the tensor
// viewed, with id `source_id`); null when the op made a new tensor (to() another dtype); its
// index_map is undefined when the viewed tensor's shape is not static (an in-place write through it
// is then refused).
std::shared_ptr<const ViewOf> derive_view(PtConvertFn convert, const TsNode& node,
                                          const SourceLoc& loc, const PtValues& inputs,
                                          const PtValue& result, int64_t source_id,
                                          BlockConverter* blocks);

// The view's contents read from `base` (after a write through another view of it).
graph::Expr read_through(const NodeBuilder& b, const graph::Expr& base, const ViewOf& view);

// The base tensor `base` after `value` (the view's new contents) is written through `view`.
graph::Expr write_through(const NodeBuilder& b, const graph::Expr& base, const ViewOf& view,
                          const graph::Expr& value);

}  // namespace anvil::frontend::pytorch
