// The PyTorch converter table, made from converters.def.
#include <unordered_map>

#include "frontend/pytorch/convert_ops.h"

namespace anvil::frontend::pytorch {

const std::vector<PtConverter>& converter_table() {
    static const std::vector<PtConverter> table = {
#define ANVIL_PT_CONVERTER(kind, function) {kind, function},
#include "frontend/pytorch/converters.def"
#undef ANVIL_PT_CONVERTER
    };
    return table;
}

PtConvertFn find_converter(const std::string& kind) {
    static const std::unordered_map<std::string, PtConvertFn> by_kind = [] {
        std::unordered_map<std::string, PtConvertFn> m;
        for (const auto& c : converter_table()) m.emplace(c.kind, c.convert);
        return m;
    }();
    auto it = by_kind.find(kind);
    return it == by_kind.end() ? nullptr : it->second;
}

}  // namespace anvil::frontend::pytorch
