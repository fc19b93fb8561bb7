// Attributes of the elementwise family (ops/elementwise.cpp).
#pragma once

#include "graph/attrs.h"

namespace anvil::ops {

struct CastAttrs : graph::AttrsBase<CastAttrs> {
    static constexpr const char* kTypeName = "CastAttrs";
    DataType dtype = DataType::float32();
    void visit_fields(graph::AttrVisitor& v) override { v.visit("dtype", &dtype); }
};

}  // namespace anvil::ops
