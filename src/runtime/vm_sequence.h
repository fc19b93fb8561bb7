// The VM's ONNX sequence and optional instructions (vm_program.h): a sequence is a tuple of
// tensors and an empty optional is none, so these are list operations on VMValues; only
// concatenation copies data. Errors are UserErrors naming the model node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/memory_pool.h"
#include "runtime/vm.h"

namespace anvil::runtime {

// The tensors of the sequence `v`; UserError naming `node` when it is not a sequence.
const std::vector<VMValue>& sequence_items(const VMValue& v, const std::string& node);

// ONNX SequenceLength: an int64 scalar tensor.
NDArray sequence_length(const VMValue& seq, const std::string& node);
// ONNX SequenceAt: `pos` is a one-element integer tensor in [-n, n).
VMValue sequence_at(const VMValue& seq, const VMValue& pos, const std::string& node);
// ONNX SequenceInsert: before `pos` in [-n, n] (null: at the back).
VMValue sequence_insert(const VMValue& seq, const VMValue& tensor, const VMValue* pos,
                        const std::string& node);
// ONNX SequenceErase: the element at `pos` in [-n, n) (null: the last).
VMValue sequence_erase(const VMValue& seq, const VMValue* pos, const std::string& node);

// The tensors joined along `axis` (negative counts from the back): concatenated, or stacked on
// a new axis when `new_axis`. They must agree in dtype and in every other dimension; `what`
// names them in that error ("element", "iteration"). UserError for no tensors.
NDArray concat_tensors(const std::vector<NDArray>& items, int64_t axis, bool new_axis,
                       const MemoryPool& pool, const std::string& node, const std::string& what);

// ONNX SplitToSequence: `x` split along `axis` (in [0, rank)) into parts of the sizes in the 1-D
// integer tensor `split` (they must add up to the axis's size), of the size in a 0-D `split`
// (the last part smaller; none of an empty axis), or of size 1 when `split` is null, `squeeze`
// then removing the axis from each part. The parts are copies.
VMValue split_to_sequence(const NDArray& x, const VMValue* split, int64_t axis, bool squeeze,
                          const MemoryPool& pool, const std::string& node);

// ONNX ConcatFromSequence: concat_tensors of the sequence's elements.
NDArray concat_sequence(const VMValue& seq, int64_t axis, bool new_axis, const MemoryPool& pool,
                        const std::string& node);

}  // namespace anvil::runtime
