// The TFLite converter table, made from converters.def.
#include <unordered_map>

#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_schema.h"

namespace anvil::frontend::tflite {

const std::vector<TfConverter>& converter_table() {
    static const std::vector<TfConverter> table = {
#define ANVIL_TFL_CONVERTER(code, function) {code, function},
#define ANVIL_TFL_CUSTOM_CONVERTER(name, function)
#include "frontend/tflite/converters.def"
#undef ANVIL_TFL_CUSTOM_CONVERTER
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

TfConvertFn find_custom_converter(const std::string& custom) {
    static const std::unordered_map<std::string, TfConvertFn> by_name = {
#define ANVIL_TFL_CONVERTER(code, function)
#define ANVIL_TFL_CUSTOM_CONVERTER(name, function) {name, function},
#include "frontend/tflite/converters.def"
#undef ANVIL_TFL_CUSTOM_CONVERTER
#undef ANVIL_TFL_CONVERTER
    };
    auto it = by_name.find(custom);
    return it == by_name.end() ? nullptr : it->second;
}

TfConvertFn find_converter(const TfliteOperatorCode& code) {
    return code.builtin == op::kCustom ? find_custom_converter(code.custom)
                                       : find_converter(code.builtin);
}

}  // namespace anvil::frontend::tflite
