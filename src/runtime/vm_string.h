// The VM's string instructions (vm_program.h): ONNX StringNormalizer and Cast to and from
// STRING, over string tensors (string_tensor.h). Errors are UserErrors naming the model node.
//
// Numbers print as NumPy prints them (the ONNX reference's spelling): the shortest decimal that
// reads back to the same value, positional for 1e-4 <= |x| < 1e16 ("0.1", "100.0"), scientific
// otherwise ("1e-05", "1.5e+20"); infinities and NaN are "INF", "-INF" and "NaN"; bools "True"
// and "False". Strings read back as numbers accept what C's strtod does (decimal and scientific,
// "+INF", "INF", "-INF", "NaN" in any case; surrounding whitespace ignored); integers take
// integer literals exactly and truncate decimals toward zero; bools also take "true"/"false".
// Text that is not a number, or one out of the target's range, is an error.
#pragma once

#include <string>
#include <vector>

#include "runtime/ndarray.h"

namespace anvil::runtime {

enum class CaseChange { none, lower, upper };

// "NONE", "LOWER", "UPPER" (ONNX's spelling); UserError otherwise.
CaseChange case_change_from_string(const std::string& text);

// ONNX StringNormalizer over a [C] or [1, C] string tensor: drops the stopwords (compared
// case-insensitively unless `case_sensitive`), then changes the case. When every string is a
// stopword the result is [1] (or [1, 1]) holding one empty string.
NDArray normalize_strings(const NDArray& x, CaseChange change, bool case_sensitive,
                          const std::vector<std::string>& stopwords, const std::string& node);

// ONNX Cast to STRING of a numeric or bool tensor.
NDArray format_strings(const NDArray& x, const std::string& node);

// ONNX Cast from STRING to `dtype` (an integer, float, bfloat16 or bool type).
NDArray parse_strings(const NDArray& x, DLDataType dtype, const std::string& node);

}  // namespace anvil::runtime
