// Typed attributes of graph calls.
//
// Each op family declares its attribute struct (e.g. Conv2DAttrs with strides, padding, ...)
// as plain fields plus one visit_fields() that names them. Printing, parsing, equality and
// hashing all go through that one list, so a field is declared exactly once:
//
//   struct Conv2DAttrs : AttrsBase<Conv2DAttrs> {
//       static constexpr const char* kTypeName = "Conv2DAttrs";
//       std::vector<int64_t> strides{1, 1};
//       int64_t groups = 1;
//       void visit_fields(AttrVisitor& v) override {
//           v.visit("strides", &strides);
//           v.visit("groups", &groups);
//       }
//   };
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/data_type.h"
#include "ir/expr.h"
#include "support/ref.h"

namespace anvil::graph {

class AttrVisitor {
public:
    virtual ~AttrVisitor() = default;
    virtual void visit(const char* name, int64_t* value) = 0;
    virtual void visit(const char* name, double* value) = 0;
    virtual void visit(const char* name, bool* value) = 0;
    virtual void visit(const char* name, std::string* value) = 0;
    virtual void visit(const char* name, std::vector<int64_t>* value) = 0;
    virtual void visit(const char* name, std::vector<double>* value) = 0;
    virtual void visit(const char* name, std::vector<std::string>* value) = 0;
    virtual void visit(const char* name, DataType* value) = 0;
    // A shape whose dimensions may be symbolic (int64 expressions over the module's dimension
    // variables), spelled like a tensor type's shape: (n, 3, 224, 224).
    virtual void visit(const char* name, std::vector<PrimExpr>* value) = 0;
};

struct Attrs : Object {
    virtual const char* type_name() const = 0;
    // Visits every field. Readers (printer, equality) must not write through the pointers.
    virtual void visit_fields(AttrVisitor& v) = 0;
    // A copy that the caller may modify before sharing it (the parser, rewriting passes).
    virtual Ref<Attrs> clone() const = 0;
};

template <typename Derived>
struct AttrsBase : Attrs {
    const char* type_name() const override { return Derived::kTypeName; }
    Ref<Attrs> clone() const override {
        return Ref<Attrs>(new Derived(static_cast<const Derived&>(*this)));
    }
};

// For ops without attributes.
struct NoAttrs : AttrsBase<NoAttrs> {
    static constexpr const char* kTypeName = "NoAttrs";
    void visit_fields(AttrVisitor&) override {}
};

bool attrs_equal(const Attrs& a, const Attrs& b);
size_t attrs_hash(const Attrs& a);
// "strides=[2, 2], padding=[3, 3, 3, 3]": the fields that differ from `defaults` (all when
// defaults is null, but for unset (void) types), in declaration order.
std::string attrs_str(const Attrs& a, const Attrs* defaults);
// The same, leaving out the fields named in `skip` (those a call's own syntax shows).
std::string attrs_str(const Attrs& a, const Attrs* defaults, const std::vector<std::string>& skip);

}  // namespace anvil::graph
