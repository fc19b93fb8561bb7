// The values `anvil run` reads, compares and writes: tensors, ONNX sequences (a tuple of
// tensors, runtime::VMValue) and empty optionals (none), so that a model taking or giving
// sequences runs from the command line like any other.
//
// From an ONNX test_data_set directory, input_K.pb is a TensorProto, a SequenceProto for a
// sequence input or an OptionalProto for an optional one (the conformance suite's data), read by
// frontend::read_value_pb. In an .npz, a tensor NAME is the array NAME (or, for a tensor input
// no array is named after, the array at its position); a sequence's tensors are the arrays
// NAME/0, NAME/1, ... (NumPy: np.savez(f, **{"s/0": a, "s/1": b})); an empty sequence and an
// empty optional are no array at all. Outputs are written the same way.
#pragma once

#include <string>
#include <vector>

#include "runtime/vm.h"

namespace anvil::cli {

// The inputs of `inputs` (their names, dtypes and kinds) read from `source`, a directory or an
// .npz; UserError naming the file and the input for what is missing or malformed.
std::vector<runtime::VMValue> read_input_values(const std::string& source,
                                                const std::vector<runtime::VMInputInfo>& inputs);

// Writes `values` to the .npz at `path`, output k named names[k] (or "outputK").
void write_output_values(const std::string& path, const std::vector<std::string>& names,
                         const std::vector<runtime::VMValue>& values);

// Compares output k with DIR/output_K.pb (a sequence element by element) as numpy.allclose does
// with rtol 1e-3, atol 1e-4, printing the largest errors; false on a mismatch.
bool compare_output_values(const std::string& dir, const std::vector<runtime::VMValue>& values);

}  // namespace anvil::cli
