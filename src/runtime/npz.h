// NumPy's .npy and .npz files (numpy.save / numpy.savez / numpy.savez_compressed), so that
// `anvil run` and deployed programs exchange tensors with Python without conversion. String
// tensors are NumPy unicode arrays ('<U<width>', UTF-32), converted from and to UTF-8.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/ndarray.h"

namespace anvil::runtime {

// Name → array, in file order. Names are the member names without ".npy". UserError naming the
// file and what is wrong for anything that is not a readable .npz of C-ordered arrays.
std::vector<std::pair<std::string, NDArray>> read_npz(const std::string& path);
// The same from the bytes of an .npz; `what` names it in messages (e.g. "'inputs.npz'").
std::vector<std::pair<std::string, NDArray>> read_npz_bytes(std::string_view bytes,
                                                            const std::string& what);
// Writes an uncompressed .npz (like numpy.savez).
void write_npz(const std::string& path, const std::vector<std::pair<std::string, NDArray>>& arrays);

// One .npy document (the contents of a .npy file).
NDArray parse_npy(const std::string& bytes, const std::string& what);
std::string format_npy(const NDArray& array);

}  // namespace anvil::runtime
