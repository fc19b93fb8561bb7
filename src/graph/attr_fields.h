// Attributes by field name. The attribute structs live in ops/, which the graph level does not
// include; passes read and write fields through the one visit_fields() list each struct
// declares, by the field's name (e.g. "axis", "epsilon", "newshape").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/attrs.h"

namespace anvil::graph {

// The field's value; nullopt when there is no field of that name and type.
std::optional<int64_t> attr_int(const Attrs& a, const std::string& name);
std::optional<bool> attr_bool(const Attrs& a, const std::string& name);
std::optional<double> attr_float(const Attrs& a, const std::string& name);
std::optional<std::string> attr_string(const Attrs& a, const std::string& name);
std::optional<std::vector<int64_t>> attr_ints(const Attrs& a, const std::string& name);
std::optional<std::vector<PrimExpr>> attr_shape(const Attrs& a, const std::string& name);

// A copy of `a` with the field set; InternalError when there is no such field of that type.
Ref<Attrs> attr_with(const Attrs& a, const std::string& name, int64_t value);
Ref<Attrs> attr_with(const Attrs& a, const std::string& name, std::vector<int64_t> value);
Ref<Attrs> attr_with(const Attrs& a, const std::string& name, std::string value);
// (Its own name: an integer literal would convert to int64_t and double alike.)
Ref<Attrs> attr_with_float(const Attrs& a, const std::string& name, double value);
Ref<Attrs> attr_with_bool(const Attrs& a, const std::string& name, bool value);

}  // namespace anvil::graph
