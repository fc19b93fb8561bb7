// The PyTorch converter functions (internal to frontend/pytorch), declared from THE table,
// converters.def, so the declarations and the table cannot drift apart.
#pragma once

#include "frontend/pytorch/converter.h"

namespace anvil::frontend::pytorch {

#define ANVIL_PT_CONVERTER(kind, function) PtValues function(PtContext& ctx);
#include "frontend/pytorch/converters.def"
#undef ANVIL_PT_CONVERTER

}  // namespace anvil::frontend::pytorch
