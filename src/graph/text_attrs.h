// Attribute values of the graph IR's text form, for graph/parser.cpp: `name=value` pairs as
// read, and how they are written into an op's attribute struct through its visit_fields (so
// only declared fields can be set, each with its declared kind of value).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/text_lexer.h"

namespace anvil::graph::text {

struct AttrValue {
    enum class Kind { Int, Float, Bool, String, Name, List, Shape };
    Kind kind = Kind::Int;
    int64_t i = 0;
    double f = 0;
    bool b = false;
    std::string s;  // a string's contents or a bare name (a dtype)
    std::vector<AttrValue> items;
    std::vector<PrimExpr> dims;  // a shape: (n, 3, 224, 224)
    Token at;                    // where the value starts
};

struct AttrArg {
    Token name;
    AttrValue value;
    bool used = false;
};

// Writes `args` into `attrs` by field name and marks them used. UserError at a value of the
// wrong kind (naming `op` and the attribute), or at the name of an attribute `attrs` lacks.
void write_attrs(Attrs& attrs, std::vector<AttrArg>& args, const std::string& op);

}  // namespace anvil::graph::text
