#include "ops/sequence.h"

#include "ops/op_spec.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::ops {

using graph::Expr;
using graph::Type;

namespace {

const graph::SequenceType& expect_sequence(const Type& t, const SourceLoc& loc,
                                           const std::string& what) {
    if (auto* st = t.as<graph::SequenceType>()) return *st;
    user_error(loc) << what << " must be a sequence, but has type " << graph::type_str(t);
    ANVIL_UNREACHABLE();
}

// A position operand: a one-element integer tensor.
void expect_position(const Type& t, const SourceLoc& loc, const std::string& op) {
    const auto& tt = graph::expect_tensor(t, loc, "the position of " + op);
    if (!tt.dtype.is_int() || !tt.is_static() || tt.num_elements() != 1) {
        user_error(loc) << op << ": the position must be one integer, not " << graph::type_str(t);
    }
}

Type one_result(const graph::TensorResults& r, const std::string& op) {
    std::vector<Type> types = r.output_types(op);
    if (types.size() != 1) user_error() << op << " has one result, not " << types.size();
    return types[0];
}

Type construct_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs&,
                    const SourceLoc& loc) {
    if (args.empty()) user_error(loc) << "seq.construct needs at least one tensor";
    Type seq;
    for (size_t i = 0; i < args.size(); ++i) {
        Type element = graph::sequence_of(graph::expect_tensor(args[i], loc, "a sequence element"));
        if (!seq.defined()) {
            seq = element;
            continue;
        }
        auto joined = graph::join_sequence_types(*seq.as<graph::SequenceType>(),
                                                 *element.as<graph::SequenceType>());
        if (!joined) {
            user_error(loc) << "seq.construct: element " << i << " is " << graph::type_str(args[i])
                            << ", element 0 is " << graph::type_str(args[0])
                            << " (a sequence has one dtype)";
        }
        seq = *joined;
    }
    return seq;
}

Type empty_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
                const SourceLoc& loc) {
    if (!args.empty()) user_error(loc) << "seq.empty takes no arguments";
    Type t = one_result(attrs_as<SequenceResultAttrs>(attrs), "seq.empty");
    expect_sequence(t, loc, "the result of seq.empty");
    return t;
}

Type length_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs&,
                 const SourceLoc& loc) {
    if (args.size() != 1) user_error(loc) << "seq.length takes one sequence";
    expect_sequence(args[0], loc, "the argument of seq.length");
    return graph::make_tensor_type(std::vector<int64_t>{}, DataType::int64());
}

Type at_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
             const SourceLoc& loc) {
    if (args.size() != 2) user_error(loc) << "seq.at takes a sequence and a position";
    const auto& seq = expect_sequence(args[0], loc, "the first argument of seq.at");
    expect_position(args[1], loc, "seq.at");
    Type result = one_result(attrs_as<SequenceResultAttrs>(attrs), "seq.at");
    const auto& tt = graph::expect_tensor(result, loc, "the result of seq.at");
    if (tt.dtype != seq.dtype || (seq.dims && seq.dims->size() != tt.ndim())) {
        user_error(loc) << "seq.at: the result type " << graph::type_str(result)
                        << " does not fit the sequence " << graph::type_str(args[0]);
    }
    return result;
}

Type insert_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs&,
                 const SourceLoc& loc) {
    if (args.size() != 2 && args.size() != 3) {
        user_error(loc) << "seq.insert takes a sequence, a tensor and optionally a position";
    }
    const auto& seq = expect_sequence(args[0], loc, "the first argument of seq.insert");
    const auto& t = graph::expect_tensor(args[1], loc, "the inserted value");
    if (args.size() == 3) expect_position(args[2], loc, "seq.insert");
    auto joined = graph::join_sequence_types(seq, *graph::sequence_of(t).as<graph::SequenceType>());
    if (!joined) {
        user_error(loc) << "seq.insert: cannot insert a " << graph::type_str(args[1]) << " into a "
                        << graph::type_str(args[0]);
    }
    return *joined;
}

Type erase_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs&,
                const SourceLoc& loc) {
    if (args.size() != 1 && args.size() != 2) {
        user_error(loc) << "seq.erase takes a sequence and optionally a position";
    }
    expect_sequence(args[0], loc, "the first argument of seq.erase");
    if (args.size() == 2) expect_position(args[1], loc, "seq.erase");
    return args[0];
}

Type concat_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
                 const SourceLoc& loc) {
    if (args.size() != 1) user_error(loc) << "seq.concat takes one sequence";
    const auto& seq = expect_sequence(args[0], loc, "the argument of seq.concat");
    const auto& a = attrs_as<SequenceConcatAttrs>(attrs);
    Type result = one_result(a, "seq.concat");
    const auto& tt = graph::expect_tensor(result, loc, "the result of seq.concat");
    size_t rank = tt.ndim() - (a.new_axis ? 1 : 0);
    if (tt.dtype != seq.dtype || (seq.dims && seq.dims->size() != rank)) {
        user_error(loc) << "seq.concat: the result type " << graph::type_str(result)
                        << " does not fit the sequence " << graph::type_str(args[0]);
    }
    return result;
}

// The parts keep x's dtype and rank (less the axis when it is dropped); their size along the
// axis, and any symbolic dimension of x, is left open.
Type split_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
                const SourceLoc& loc) {
    if (args.size() != 1 && args.size() != 2) {
        user_error(loc) << "seq.split takes a tensor and optionally the split";
    }
    const auto& x = graph::expect_tensor(args[0], loc, "the tensor of seq.split");
    const auto& a = attrs_as<SequenceSplitAttrs>(attrs);
    if (a.axis < 0 || a.axis >= static_cast<int64_t>(x.ndim())) {
        user_error(loc) << "seq.split: axis " << a.axis << " is out of range for "
                        << graph::type_str(args[0]);
    }
    bool squeeze = args.size() == 1 && !a.keepdims;
    if (args.size() == 2) {
        const auto& s = graph::expect_tensor(args[1], loc, "the split of seq.split");
        if (!s.dtype.is_integer() || s.ndim() > 1) {
            user_error(loc) << "seq.split: the split must be an integer scalar or 1-D tensor, not "
                            << graph::type_str(args[1]);
        }
    }
    std::vector<int64_t> dims;
    for (size_t d = 0; d < x.ndim(); ++d) {
        if (static_cast<int64_t>(d) == a.axis && squeeze) continue;
        const int64_t* v = as_const_int(x.shape[d]);
        dims.push_back(v && static_cast<int64_t>(d) != a.axis ? *v : graph::SequenceType::kAnyDim);
    }
    return graph::make_sequence_type(x.dtype, std::move(dims));
}

Type some_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs&,
               const SourceLoc& loc) {
    if (args.size() != 1) user_error(loc) << "optional.some takes one value";
    if (!args[0].is<graph::TensorType>() && !args[0].is<graph::SequenceType>()) {
        user_error(loc) << "an optional holds a tensor or a sequence, not "
                        << graph::type_str(args[0]);
    }
    return graph::make_optional_type(args[0]);
}

Type none_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs& attrs,
               const SourceLoc& loc) {
    if (!args.empty()) user_error(loc) << "optional.none takes no arguments";
    Type t = one_result(attrs_as<SequenceResultAttrs>(attrs), "optional.none");
    if (!t.is<graph::OptionalType>()) {
        user_error(loc) << "optional.none makes an optional, not " << graph::type_str(t);
    }
    return t;
}

const graph::OptionalType& expect_optional(const std::vector<Type>& args, const SourceLoc& loc,
                                           const char* op) {
    if (args.size() != 1) user_error(loc) << op << " takes one optional";
    auto* ot = args[0].as<graph::OptionalType>();
    if (!ot) {
        user_error(loc) << op << ": the argument must be an optional, not "
                        << graph::type_str(args[0]);
    }
    return *ot;
}

Type has_value_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs&,
                    const SourceLoc& loc) {
    expect_optional(args, loc, "optional.has_value");
    return graph::make_tensor_type(std::vector<int64_t>{}, DataType::bool_());
}

Type get_type(const graph::Op&, const std::vector<Type>& args, const graph::Attrs&,
              const SourceLoc& loc) {
    return expect_optional(args, loc, "optional.get").elem;
}

template <typename A>
Ref<A> result_attrs(const Type& result) {
    auto attrs = Ref<A>(new A());
    const_cast<A*>(attrs.get())->set_outputs(result);
    return attrs;
}

Ref<graph::Op> sequence_op(const char* name, graph::TypeRule rule, const char* description,
                           Ref<graph::Attrs> (*attrs)() = default_attrs<graph::NoAttrs>) {
    return make_op({.name = name,
                    .num_inputs = -1,
                    .make_default_attrs = attrs,
                    .infer_type = rule,
                    .pattern = graph::OpPattern::Opaque,
                    .executor_op = true,
                    .description = description});
}

}  // namespace

Expr make_sequence(std::vector<Expr> tensors, SourceLoc loc) {
    return graph::make_call(get_op("seq.construct"), std::move(tensors),
                            Ref<graph::Attrs>(new graph::NoAttrs()), std::move(loc));
}

Expr make_empty_sequence(DataType dtype, SourceLoc loc) {
    return graph::make_call(
        get_op("seq.empty"), {},
        result_attrs<SequenceResultAttrs>(graph::make_empty_sequence_type(dtype)), std::move(loc));
}

Expr make_sequence_at(Expr seq, Expr pos, const Type& result, SourceLoc loc) {
    return graph::make_call(get_op("seq.at"), {std::move(seq), std::move(pos)},
                            result_attrs<SequenceResultAttrs>(result), std::move(loc));
}

Expr make_sequence_concat(Expr seq, int64_t axis, bool new_axis, const Type& result,
                          SourceLoc loc) {
    auto attrs = result_attrs<SequenceConcatAttrs>(result);
    auto* a = const_cast<SequenceConcatAttrs*>(attrs.get());
    a->axis = axis;
    a->new_axis = new_axis;
    return graph::make_call(get_op("seq.concat"), {std::move(seq)}, attrs, std::move(loc));
}

Expr make_sequence_split(Expr x, Expr split, int64_t axis, bool keepdims, SourceLoc loc) {
    auto attrs = make_ref<SequenceSplitAttrs>();
    auto* a = const_cast<SequenceSplitAttrs*>(attrs.get());
    a->axis = axis;
    a->keepdims = keepdims;
    std::vector<Expr> args = {std::move(x)};
    if (split.defined()) args.push_back(std::move(split));
    return graph::make_call(get_op("seq.split"), std::move(args), attrs, std::move(loc));
}

Expr make_optional_none(const Type& result, SourceLoc loc) {
    return graph::make_call(get_op("optional.none"), {}, result_attrs<SequenceResultAttrs>(result),
                            std::move(loc));
}

const SequenceConcatAttrs* sequence_concat_attrs(const Expr& e) {
    return call_attrs<SequenceConcatAttrs>(e, "seq.concat");
}

std::string sequence_op_name(const Expr& e) {
    auto* call = e.as<graph::Call>();
    if (!call || !call->op.defined()) return "";
    const std::string& name = call->op->name;
    return name.starts_with("seq.") || name.starts_with("optional.") ? name : "";
}

Ref<graph::Op> make_seq_construct_op() {
    return sequence_op("seq.construct", construct_type, "a sequence of tensors");
}
Ref<graph::Op> make_seq_empty_op() {
    return sequence_op("seq.empty", empty_type, "a sequence with no element",
                       default_attrs<SequenceResultAttrs>);
}
Ref<graph::Op> make_seq_length_op() {
    return sequence_op("seq.length", length_type, "the number of tensors in a sequence");
}
Ref<graph::Op> make_seq_at_op() {
    return sequence_op("seq.at", at_type, "the tensor at a position of a sequence",
                       default_attrs<SequenceResultAttrs>);
}
Ref<graph::Op> make_seq_insert_op() {
    return sequence_op("seq.insert", insert_type, "a sequence with a tensor inserted");
}
Ref<graph::Op> make_seq_erase_op() {
    return sequence_op("seq.erase", erase_type, "a sequence with a tensor removed");
}
Ref<graph::Op> make_seq_concat_op() {
    return sequence_op("seq.concat", concat_type, "a sequence's tensors joined along an axis",
                       default_attrs<SequenceConcatAttrs>);
}
Ref<graph::Op> make_seq_split_op() {
    return sequence_op("seq.split", split_type, "a tensor split along an axis into a sequence",
                       default_attrs<SequenceSplitAttrs>);
}
Ref<graph::Op> make_optional_some_op() {
    return sequence_op("optional.some", some_type, "an optional holding a value");
}
Ref<graph::Op> make_optional_none_op() {
    return sequence_op("optional.none", none_type, "an empty optional",
                       default_attrs<SequenceResultAttrs>);
}
Ref<graph::Op> make_optional_has_value_op() {
    return sequence_op("optional.has_value", has_value_type, "whether an optional holds a value");
}
Ref<graph::Op> make_optional_get_op() {
    return sequence_op("optional.get", get_type, "the value an optional holds");
}

}  // namespace anvil::ops
