// The JSON form of a ParamTable (param_blob.h); internal to the runtime.
#pragma once

#include <string>

#include "runtime/json_reader.h"
#include "runtime/param_blob.h"

namespace anvil::runtime {

ParamTable read_params(const json& doc, const std::string& document);
json params_json(const ParamTable& table);

}  // namespace anvil::runtime
