// Checks of what libanvil_runtime_dnnl.so reads from a model library (dnnl_format.h) before it
// creates anything: the bytes come from a file, so every value id, rank, shape, weight range and
// attribute the module builder relies on is checked here, and a bad one is a UserError naming
// the region and step. (oneDNN then checks the geometry it computes: a primitive it cannot
// create is a UserError too.)
#pragma once

#include <nlohmann/json.hpp>

namespace anvil::codegen::dnnl {

// UserError unless `fn` is a well-formed region whose constants lie in `weights_size` bytes.
void check_function(const nlohmann::json& fn, size_t weights_size);

}  // namespace anvil::codegen::dnnl
