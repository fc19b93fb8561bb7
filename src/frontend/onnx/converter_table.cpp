// The table of ONNX converters, made from the one list converters.def (which also declares
// them: convert_ops.h).
#include "frontend/onnx/convert_ops.h"

namespace anvil::frontend {

const std::vector<Converter>& converter_table() {
    static const std::vector<Converter> table = {
#define ANVIL_ONNX_CONVERTER(op_type, min_opset, max_opset, function) \
    {op_type, min_opset, max_opset, function},
#include "frontend/onnx/converters.def"
#undef ANVIL_ONNX_CONVERTER
    };
    return table;
}

}  // namespace anvil::frontend
