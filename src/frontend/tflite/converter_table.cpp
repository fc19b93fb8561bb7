// The TFLite converter table, made from converters.def.
#include <unordered_map>

#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_schema.h"

namespace anvil::frontend::tflite {

const std::vector<TfConverter>& converter_table() {
    static const std::vector<TfConverter> table = {
#define ANVIL_TFL_CONVERTER(code, function) {code, function},
#include "frontend/tflite/converters.def"
#undef ANVIL_TFL_CONVERTER
    };
    return table;
}

TfConvertFn find_converter(int32_t builtin) {
    static const std::unordered_map<int32_t, TfConvertFn> by_code = [] {
        std::unordered_map<int32_t, TfConvertFn> m;
        for (const auto& c : converter_table()) m.emplace(c.builtin, c.convert);
        return m;
    }();
    auto it = by_code.find(builtin);
    return it == by_code.end() ? nullptr : it->second;
}

}  // namespace anvil::frontend::tflite
