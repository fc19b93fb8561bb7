#include "ops/string.h"

#include "ops/op_spec.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::ops {

using graph::Expr;
using graph::Type;

namespace {

const graph::TensorType& expect_one_string_tensor(const std::vector<Type>& args,
                                                  const SourceLoc& loc, const char* op) {
    if (args.size() != 1) user_error(loc) << op << " takes one tensor";
    const auto& tt = graph::expect_tensor(args[0], loc, std::string("the argument of ") + op);
    if (!tt.dtype.is_string()) {
        user_error(loc) << op << " takes a string tensor, not " << graph::type_str(args[0]);
    }
    return tt;
}

Type normalize_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
                    const SourceLoc& loc) {
    const auto& x = expect_one_string_tensor(args, loc, "string.normalize");
    bool two_d = x.ndim() == 2 && is_const_int(x.shape[0], 1);
    if (x.ndim() != 1 && !two_d) {
        user_error(loc) << "StringNormalizer takes a [C] or [1, C] tensor, not "
                        << graph::type_str(args[0]);
    }
    const auto& a = attrs_as<StringNormalizeAttrs>(attrs);
    if (a.case_change != "NONE" && a.case_change != "LOWER" && a.case_change != "UPPER") {
        user_error(loc) << "string.normalize: case_change must be NONE, LOWER or UPPER, not '"
                        << a.case_change << "'";
    }
    std::vector<Type> results = a.output_types("string.normalize");
    const graph::TensorType* r = results.size() == 1 ? results[0].as<graph::TensorType>() : nullptr;
    if (!r || !r->dtype.is_string() || r->ndim() != x.ndim() ||
        (two_d && !is_const_int(r->shape[0], 1))) {
        user_error(loc) << "string.normalize: the result type must be a string tensor of the "
                           "input's rank (leading 1 kept), not "
                        << (results.size() == 1 ? graph::type_str(results[0]) : "that");
    }
    return results[0];
}

Type format_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs&,
                 const SourceLoc& loc) {
    if (args.size() != 1) user_error(loc) << "string.format takes one tensor";
    const auto& x = graph::expect_tensor(args[0], loc, "the argument of string.format");
    if (x.dtype.is_string() || x.dtype.is_handle() || x.dtype.is_vector()) {
        user_error(loc) << "string.format takes numbers, not " << graph::type_str(args[0]);
    }
    return graph::make_tensor_type(x.shape, DataType::string());
}

Type parse_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
                const SourceLoc& loc) {
    const auto& x = expect_one_string_tensor(args, loc, "string.parse");
    DataType to = attrs_as<StringParseAttrs>(attrs).dtype;
    if (to.is_string() || to.is_handle() || to.is_void() || to.is_vector()) {
        user_error(loc) << "string.parse reads numbers, not " << to.str();
    }
    return graph::make_tensor_type(x.shape, to);
}

Ref<graph::Op> string_op(const char* name, graph::TypeRule rule, const char* description,
                         Ref<graph::Attrs> (*attrs)()) {
    return make_op({.name = name,
                    .make_default_attrs = attrs,
                    .infer_type = rule,
                    .pattern = graph::OpPattern::Opaque,
                    .executor_op = true,
                    .description = description});
}

}  // namespace

Expr make_string_normalize(Expr x, const std::string& case_change, bool case_sensitive,
                           std::vector<std::string> stopwords, const Type& result, SourceLoc loc) {
    auto attrs = make_ref<StringNormalizeAttrs>();
    auto* a = const_cast<StringNormalizeAttrs*>(attrs.get());
    a->case_change = case_change;
    a->case_sensitive = case_sensitive;
    a->stopwords = std::move(stopwords);
    a->set_outputs(result);
    return graph::make_call(get_op("string.normalize"), {std::move(x)}, attrs, std::move(loc));
}

Expr make_string_format(Expr x, SourceLoc loc) {
    return graph::make_call(get_op("string.format"), {std::move(x)}, nullptr, std::move(loc));
}

Expr make_string_parse(Expr x, DataType dtype, SourceLoc loc) {
    auto attrs = make_ref<StringParseAttrs>();
    const_cast<StringParseAttrs*>(attrs.get())->dtype = dtype;
    return graph::make_call(get_op("string.parse"), {std::move(x)}, attrs, std::move(loc));
}

std::string string_op_name(const Expr& e) {
    auto* call = e.as<graph::Call>();
    if (!call || !call->op.defined()) return "";
    return call->op->name.starts_with("string.") ? call->op->name : "";
}

Ref<graph::Op> make_string_normalize_op() {
    return string_op("string.normalize", normalize_type,
                     "ONNX StringNormalizer: stopwords removed, case changed",
                     default_attrs<StringNormalizeAttrs>);
}
Ref<graph::Op> make_string_format_op() {
    return string_op("string.format", format_type, "numbers as strings",
                     default_attrs<graph::NoAttrs>);
}
Ref<graph::Op> make_string_parse_op() {
    return string_op("string.parse", parse_type, "strings read as numbers",
                     default_attrs<StringParseAttrs>);
}

}  // namespace anvil::ops
