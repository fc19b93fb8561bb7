// ONNX string tensors in the graph IR (element type `string`). All are executor ops: the VM
// carries them out on string tensors (runtime/vm_string.h); no kernel, fusion or folding ever
// sees a string.
//
//   string.normalize(%x, case_change=, case_sensitive=, stopwords=, <result type>)
//                          ONNX StringNormalizer of a [C] or [1, C] tensor; the result's last
//                          dimension is a fresh variable the executor binds (stopwords removed)
//   string.format(%x)      numbers as strings (Cast to STRING), same shape
//   string.parse(%x, dtype=)  strings read as numbers of dtype (Cast from STRING), same shape
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/dps_outputs.h"
#include "graph/expr.h"

namespace anvil::ops {

struct StringNormalizeAttrs : graph::AttrsBase<StringNormalizeAttrs>, graph::TensorResults {
    static constexpr const char* kTypeName = "StringNormalizeAttrs";
    std::string case_change = "NONE";  // "NONE", "LOWER" or "UPPER"
    bool case_sensitive = false;
    std::vector<std::string> stopwords;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("case_change", &case_change);
        v.visit("case_sensitive", &case_sensitive);
        v.visit("stopwords", &stopwords);
        visit_outputs(v);
    }
};

struct StringParseAttrs : graph::AttrsBase<StringParseAttrs> {
    static constexpr const char* kTypeName = "StringParseAttrs";
    DataType dtype = DataType::float32();
    void visit_fields(graph::AttrVisitor& v) override { v.visit("dtype", &dtype); }
};

graph::Expr make_string_normalize(graph::Expr x, const std::string& case_change,
                                  bool case_sensitive, std::vector<std::string> stopwords,
                                  const graph::Type& result, SourceLoc loc = {});
graph::Expr make_string_format(graph::Expr x, SourceLoc loc = {});
graph::Expr make_string_parse(graph::Expr x, DataType dtype, SourceLoc loc = {});

// The call's op name when `e` calls one of these ops ("string.parse"); empty otherwise.
std::string string_op_name(const graph::Expr& e);

}  // namespace anvil::ops
