#include "driver/vm_compiler.h"

#include <algorithm>
#include <unordered_map>

#include "graph/expr_functor.h"
#include "ops/call_tir.h"
#include "ops/control_flow.h"
#include "ops/sequence.h"
#include "ops/shape_tensor.h"
#include "ops/string.h"
#include "ops/value_shapes.h"
#include "runtime/string_tensor.h"
#include "support/error.h"

namespace anvil::driver {

using graph::Expr;
using runtime::ShapeCode;
using runtime::ShapeToken;
using runtime::VMInstruction;
using runtime::VMOp;

namespace {

// The compiled value of a graph expression: one register, or the registers of a tuple's fields
// (a tuple is materialized with a `tuple` instruction only where a whole tuple is needed).
struct Value {
    int reg = -1;
    std::vector<Value> fields;
    bool is_tuple() const { return reg < 0; }
};

class FunctionCompiler {
public:
    FunctionCompiler(const std::string& name, const graph::Function& f,
                     std::vector<std::pair<std::string, runtime::NDArray>>& params)
        : f_(f), params_(params) {
        fn_.name = name;
    }

    runtime::VMFunction compile() {
        for (const auto& p : f_.params) {
            int reg = new_reg();
            fn_.params.push_back(p->name);
            values_[p.get()] = Value{reg, {}};
            match_param(*p, reg);
        }
        Value result = compile(f_.body);
        int ret = materialize(result);
        add_kills(ret);
        fn_.code.push_back({.op = VMOp::ret, .reg = ret});
        fn_.num_slots = static_cast<int>(slot_names_.size());
        fn_.slot_names = slot_names_;
        return std::move(fn_);
    }

private:
    int new_reg() { return fn_.num_registers++; }

    void emit(VMInstruction in) { fn_.code.push_back(std::move(in)); }

    // Shape code for a dimension over the slots bound so far; UserError at `loc` when it uses a
    // dimension nothing binds.
    ShapeCode shape_code(const PrimExpr& e, const SourceLoc& loc) {
        ShapeCode code;
        append_code(e, loc, &code);
        return code;
    }
    void append_code(const PrimExpr& e, const SourceLoc& loc, ShapeCode* code) {
        if (auto* v = as_const_int(e)) {
            code->push_back({ShapeToken::Kind::constant, *v});
            return;
        }
        if (auto* v = e.as<Var>()) {
            auto it = slots_.find(v);
            if (it == slots_.end()) {
                user_error(loc) << "the dimension '" << v->name
                                << "' is not known when this value is computed: it is not a "
                                   "dimension of an input";
            }
            code->push_back({ShapeToken::Kind::slot, it->second});
            return;
        }
        if (auto* sel = e.as<Select>()) {
            append_code(sel->cond, loc, code);
            append_code(sel->true_value, loc, code);
            append_code(sel->false_value, loc, code);
            code->push_back({ShapeToken::Kind::select, 0});
            return;
        }
        if (auto* n = e.as<Not>()) {  // !a is a == 0
            append_code(n->a, loc, code);
            code->push_back({ShapeToken::Kind::constant, 0});
            code->push_back({ShapeToken::Kind::eq, 0});
            return;
        }
        if (auto* c = e.as<Cast>()) {
            if (!c->dtype.is_int() && !c->dtype.is_uint() && !c->dtype.is_bool()) {
                user_error(loc) << "a shape uses the non-integer expression " << e;
            }
            append_code(c->value, loc, code);
            return;
        }
        using K = ShapeToken::Kind;
        struct Binary {
            ExprKind kind;
            K token;
        };
        // Shapes are non-negative, so truncating and flooring division agree.
        static constexpr Binary kBinary[] = {
            {ExprKind::Add, K::add},
            {ExprKind::Sub, K::sub},
            {ExprKind::Mul, K::mul},
            {ExprKind::FloorDiv, K::floordiv},
            {ExprKind::FloorMod, K::floormod},
            {ExprKind::Div, K::floordiv},
            {ExprKind::Mod, K::floormod},
            {ExprKind::Min, K::min},
            {ExprKind::Max, K::max},
            {ExprKind::EQ, K::eq},
            {ExprKind::NE, K::ne},
            {ExprKind::LT, K::lt},
            {ExprKind::LE, K::le},
            {ExprKind::And, K::land},
            {ExprKind::Or, K::lor},
        };
        // a > b is b < a.
        if (e->kind == ExprKind::GT || e->kind == ExprKind::GE) {
            const auto* bin = static_cast<const BinaryExpr*>(e.get());
            append_code(bin->b, loc, code);
            append_code(bin->a, loc, code);
            code->push_back({e->kind == ExprKind::GT ? K::lt : K::le, 0});
            return;
        }
        for (const auto& b : kBinary) {
            if (e->kind != b.kind) continue;
            const auto* bin = static_cast<const BinaryExpr*>(e.get());
            append_code(bin->a, loc, code);
            append_code(bin->b, loc, code);
            code->push_back({b.token, 0});
            return;
        }
        user_error(loc) << "the shape expression " << e << " cannot be computed at run time";
    }

    void match_param(const graph::Var& p, int reg) {
        match_tensor(p.type, reg, "input '" + p.name + "'", p.loc);
    }

    // Checks the value in `reg` against `type`, binding the dimension variables of a tensor seen
    // first. A sequence's elements and an optional's value are checked without binding (a
    // dimension they do not fix is accepted as any); seq.at and optional.get bind later.
    void match_tensor(const graph::Type& type, int reg, const std::string& what,
                      const SourceLoc& loc) {
        if (type.is<graph::SequenceType>() || type.is<graph::OptionalType>()) {
            match_container(type, reg, what, loc);
            return;
        }
        auto* tt = type.as<graph::TensorType>();
        if (!tt) return;  // tuples are checked field by field where they are used
        VMInstruction in{.op = VMOp::match_shape, .reg = reg};
        in.what = what;
        in.dtype = graph::dl_dtype_of(tt->dtype);
        for (const auto& d : tt->shape) {
            runtime::DimMatch m;
            const Var* v = d.as<Var>();
            if (v && !slots_.count(v)) {
                m.bind_slot = static_cast<int>(slot_names_.size());
                slots_[v] = m.bind_slot;
                slot_names_.push_back(v->name);
            } else {
                m.check = shape_code(d, loc);
            }
            in.dims.push_back(std::move(m));
        }
        emit(std::move(in));
    }

    void match_container(const graph::Type& type, int reg, const std::string& what,
                         const SourceLoc& loc) {
        VMInstruction in{.op = VMOp::match_shape, .reg = reg, .what = what};
        graph::Type t = type;
        if (auto* ot = t.as<graph::OptionalType>()) {
            in.index |= runtime::kMatchMayBeNone;
            t = ot->elem;
        }
        if (auto* st = t.as<graph::SequenceType>()) {
            in.index |= runtime::kMatchSequence;
            in.dtype = graph::dl_dtype_of(st->dtype);
            if (!st->dims) in.index |= runtime::kMatchAnyRank;
            for (int64_t d : st->dims.value_or(std::vector<int64_t>{})) {
                runtime::DimMatch m;
                if (d != graph::SequenceType::kAnyDim) m.check = {{ShapeToken::Kind::constant, d}};
                in.dims.push_back(std::move(m));
            }
        } else {
            const auto& tt = graph::expect_tensor(t, loc, what);
            in.dtype = graph::dl_dtype_of(tt.dtype);
            for (const auto& d : tt.shape) {
                bool known = true;
                for (const Var* v : ops::dimension_vars(d)) known = known && slots_.count(v);
                runtime::DimMatch m;
                if (known) m.check = shape_code(d, loc);
                in.dims.push_back(std::move(m));
            }
        }
        emit(std::move(in));
    }

    // The value a control-flow call returned in `reg`, split into its fields, each checked
    // against the call's result type (which binds the dimensions known only now). A loop
    // returns a tuple even when the call's type is its one value.
    Value returned_value(int reg, const Expr& e, bool tuple_value) {
        std::vector<graph::Type> fields;
        if (auto* tuple = e->type.as<graph::TupleType>()) {
            fields = tuple->fields;
        } else {
            if (tuple_value) {
                int item = new_reg();
                emit({.op = VMOp::get_item, .dst = item, .reg = reg, .index = 0});
                reg = item;
            }
            match_tensor(e->type, reg, "the result of node '" + e->loc.node_name + "'", e->loc);
            return {reg, {}};
        }
        Value v;
        for (size_t k = 0; k < fields.size(); ++k) {
            int item = new_reg();
            emit({.op = VMOp::get_item, .dst = item, .reg = reg, .index = static_cast<int64_t>(k)});
            match_tensor(fields[k], item,
                         "result " + std::to_string(k) + " of node '" + e->loc.node_name + "'",
                         e->loc);
            v.fields.push_back({item, {}});
        }
        return v;
    }

    std::vector<int> registers(const std::vector<Expr>& args, size_t begin, size_t end) {
        std::vector<int> regs;
        for (size_t i = begin; i < end; ++i) regs.push_back(materialize(compile(args[i])));
        return regs;
    }

    // if_false cond → else; then: call; goto end; else: call; end: the result's fields.
    Value compile_if(const Expr& e, const ops::IfAttrs& attrs) {
        const auto& call = *e.as<graph::Call>();
        int cond = materialize(compile(call.args[0]));
        size_t split = 1 + static_cast<size_t>(attrs.num_then_args);
        std::vector<int> then_args = registers(call.args, 1, split);
        std::vector<int> else_args = registers(call.args, split, call.args.size());
        int result = new_reg();
        size_t branch = fn_.code.size();
        emit({.op = VMOp::if_false, .reg = cond, .node = e->loc.node_name});
        emit({.op = VMOp::call_func,
              .dst = result,
              .args = then_args,
              .name = attrs.then_branch,
              .node = e->loc.node_name});
        size_t jump = fn_.code.size();
        emit({.op = VMOp::goto_});
        fn_.code[branch].index = static_cast<int64_t>(fn_.code.size());
        emit({.op = VMOp::call_func,
              .dst = result,
              .args = else_args,
              .name = attrs.else_branch,
              .node = e->loc.node_name});
        fn_.code[jump].index = static_cast<int64_t>(fn_.code.size());
        return returned_value(result, e, false);
    }

    Value compile_loop(const Expr& e, const ops::LoopAttrs& attrs) {
        const auto& call = *e.as<graph::Call>();
        VMInstruction in{.op = VMOp::loop,
                         .dst = new_reg(),
                         .args = registers(call.args, 0, call.args.size()),
                         .name = attrs.body,
                         .node = e->loc.node_name,
                         .index = attrs.num_carried};
        // A scan output's element shape, for a loop that runs zero times: 0 where the caller
        // cannot compute a dimension (the stacked result then has no elements anyway).
        std::vector<graph::Type> outputs = attrs.output_types("control.loop");
        for (size_t k = static_cast<size_t>(attrs.num_carried); k < outputs.size(); ++k) {
            const auto& t = graph::expect_tensor(outputs[k], e->loc, "a scan output");
            in.scan_ranks.push_back(static_cast<int>(t.ndim()) - 1);
            in.scan_dtypes.push_back(graph::dl_dtype_of(t.dtype));
            for (size_t d = 1; d < t.ndim(); ++d) {
                bool known = true;
                for (const Var* v : ops::dimension_vars(t.shape[d])) {
                    known = known && slots_.count(v);
                }
                in.shape.push_back(known ? shape_code(t.shape[d], e->loc)
                                         : ShapeCode{{ShapeToken::Kind::constant, 0}});
            }
        }
        int dst = in.dst;
        emit(std::move(in));
        return returned_value(dst, e, true);
    }

    Value compile(const Expr& e) {
        auto it = values_.find(e.get());
        if (it != values_.end()) return it->second;
        Value v = compile_new(e);
        values_[e.get()] = v;
        return v;
    }

    Value compile_new(const Expr& e) {
        if (auto* c = e.as<graph::Constant>()) {
            if (runtime::is_string_dtype(c->data.dtype())) return compile_string_constant(*c);
            std::string name = "p" + std::to_string(params_.size());
            params_.emplace_back(name, c->data);
            int reg = new_reg();
            emit({.op = VMOp::load_param, .dst = reg, .name = name});
            return {reg, {}};
        }
        if (auto* call = e.as<graph::Call>()) return compile_call(e, *call);
        if (auto* tuple = e.as<graph::Tuple>()) {
            Value v;
            for (const auto& f : tuple->fields) v.fields.push_back(compile(f));
            return v;
        }
        if (auto* item = e.as<graph::TupleGetItem>()) {
            Value t = compile(item->tuple);
            if (t.is_tuple()) return t.fields.at(item->index);
            int reg = new_reg();
            emit({.op = VMOp::get_item, .dst = reg, .reg = t.reg, .index = item->index});
            return {reg, {}};
        }
        if (auto* let = e.as<graph::Let>()) {
            values_[let->var.get()] = compile(let->value);
            return compile(let->body);
        }
        user_error(e->loc) << "the VM compiler cannot compile a " << graph::expr_kind_name(e->kind)
                           << " here";
        ANVIL_UNREACHABLE();
    }

    Value compile_call(const Expr& e, const graph::Call& call) {
        if (const auto* st = ops::shape_tensor_attrs(e)) {
            for (const auto& a : call.args) compile(a);  // they bind dimensions the values use
            if (st->shape.size() > 1) {
                user_error(e->loc) << "a symbolic " << st->shape.size()
                                   << "-D shape value used as data is not supported yet";
            }
            VMInstruction in{.op = VMOp::shape_tensor, .dst = new_reg(), .node = e->loc.node_name};
            in.index = st->shape.empty() ? 1 : 0;  // a 0-D tensor of its one value
            in.dtype = graph::dl_dtype_of(st->dtype);
            for (const auto& v : st->values) in.shape.push_back(shape_code(v, e->loc));
            int dst = in.dst;
            emit(std::move(in));
            return {dst, {}};
        }
        if (const auto* bind = ops::bind_values_attrs(e)) return compile_bind_values(e, *bind);
        if (const auto* a = ops::if_attrs(e)) return compile_if(e, *a);
        if (std::string op = ops::sequence_op_name(e); !op.empty()) return compile_sequence(e, op);
        if (std::string op = ops::string_op_name(e); !op.empty()) return compile_string(e, op);
        if (const auto* a = ops::loop_attrs(e)) return compile_loop(e, *a);
        if (const auto* reshape = ops::dynamic_reshape_attrs(e)) {
            VMInstruction in{.op = VMOp::reshape, .dst = new_reg(), .node = e->loc.node_name};
            in.reg = materialize(compile(call.args[0]));
            in.args = {materialize(compile(call.args[1]))};
            in.index = reshape->allowzero ? 1 : 0;
            for (const auto& d : reshape->dims) in.slots.push_back(new_slot(d, e->loc));
            int dst = in.dst;
            emit(std::move(in));
            return {dst, {}};
        }
        const auto* tir = ops::call_tir_attrs(e);
        const auto* packed = ops::call_packed_attrs(e);
        if (!tir && !packed) {
            user_error(e->loc) << "the VM compiler: main still calls "
                               << (call.op.defined() ? call.op->name : "a function")
                               << "; lower the module first";
        }
        // Both call in destination-passing style: the outputs are allocated here and passed
        // after the arguments (then a kernel's scalar shape arguments).
        VMInstruction in{.op = tir ? VMOp::call_kernel : VMOp::call_packed,
                         .name = tir ? tir->kernel : packed->func,
                         .node = node_name(e)};
        for (const auto& a : call.args) flatten(compile(a), &in.args);
        if (tir) {
            for (const auto& d : tir->shape_args) in.shape.push_back(shape_code(d, e->loc));
            in.variants = kernel_variants(*tir, e->loc);
        }
        std::vector<graph::Type> outputs =
            tir ? ops::call_tir_outputs(*tir) : ops::call_packed_outputs(*packed);
        Value result;
        for (const auto& t : outputs) {
            const auto& tt = graph::expect_tensor(t, e->loc, "a destination-passing call's result");
            VMInstruction alloc{.op = VMOp::alloc, .dst = new_reg(), .node = in.node};
            alloc.dtype = graph::dl_dtype_of(tt.dtype);
            for (const auto& d : tt.shape) alloc.shape.push_back(shape_code(d, e->loc));
            in.args.push_back(alloc.dst);
            result.fields.push_back({alloc.dst, {}});
            emit(std::move(alloc));
        }
        emit(std::move(in));
        if (result.fields.size() == 1) return result.fields[0];
        return result;
    }

    // The specialized kernels of a call_tir, each chosen when its sizes equal the values of the
    // dimensions it fixes: ($n == 8) && ($seq == 128). None where a dimension has no slot here
    // (the generic kernel runs at every size).
    std::vector<runtime::VMKernelVariant> kernel_variants(const ops::CallTirAttrs& tir,
                                                          const SourceLoc& loc) {
        for (const auto& d : tir.bucket_dims) {
            for (const Var* v : ops::dimension_vars(d)) {
                if (!slots_.count(v)) return {};
            }
        }
        std::vector<runtime::VMKernelVariant> variants;
        for (size_t k = 0; k < tir.bucket_kernels.size(); ++k) {
            runtime::VMKernelVariant v{.kernel = tir.bucket_kernels[k]};
            for (size_t j = 0; j < tir.bucket_dims.size(); ++j) {
                append_code(tir.bucket_dims[j], loc, &v.when);
                v.when.push_back({ShapeToken::Kind::constant, tir.bucket_value(k, j)});
                v.when.push_back({ShapeToken::Kind::eq, 0});
                if (j > 0) v.when.push_back({ShapeToken::Kind::land, 0});
            }
            variants.push_back(std::move(v));
        }
        return variants;
    }

    // The sequence and optional ops (ops/sequence.h), one VM instruction each.
    Value compile_sequence(const Expr& e, const std::string& op) {
        const auto& call = *e.as<graph::Call>();
        if (op == "optional.some") return compile(call.args[0]);
        std::vector<int> args = registers(call.args, 0, call.args.size());
        VMInstruction in{.dst = new_reg(), .node = e->loc.node_name};
        if (op == "seq.construct" || op == "seq.empty") {
            in.op = VMOp::tuple;
            in.args = args;
        } else if (op == "optional.none") {
            in.op = VMOp::none;
        } else {
            static const std::pair<const char*, VMOp> kOps[] = {
                {"seq.length", VMOp::seq_length},        {"seq.at", VMOp::seq_at},
                {"seq.insert", VMOp::seq_insert},        {"seq.erase", VMOp::seq_erase},
                {"seq.concat", VMOp::seq_concat},        {"seq.split", VMOp::seq_split},
                {"optional.has_value", VMOp::has_value}, {"optional.get", VMOp::get_value},
            };
            auto it = std::find_if(std::begin(kOps), std::end(kOps),
                                   [&](const auto& entry) { return op == entry.first; });
            if (it == std::end(kOps)) user_error(e->loc) << "the VM compiler cannot run " << op;
            in.op = it->second;
            in.reg = args[0];
            in.args.assign(args.begin() + 1, args.end());
            if (const auto* concat = ops::sequence_concat_attrs(e)) {
                in.op = concat->new_axis ? VMOp::seq_stack : VMOp::seq_concat;
                in.index = concat->axis;
            }
            if (op == "seq.split") {
                const auto& a = static_cast<const ops::SequenceSplitAttrs&>(*call.attrs);
                in.op = VMOp::seq_split;
                in.index = a.axis;
                if (in.args.empty() && !a.keepdims) in.name = "squeeze";
            }
        }
        int dst = in.dst;
        emit(std::move(in));
        // A tensor taken out of a sequence or an optional binds its dimensions here.
        if (e->type.is<graph::TensorType>() && op != "seq.length" && op != "optional.has_value") {
            match_tensor(e->type, dst, "the result of node '" + e->loc.node_name + "'", e->loc);
        }
        return {dst, {}};
    }

    // The string ops (ops/string.h), one VM instruction each.
    Value compile_string(const Expr& e, const std::string& op) {
        const auto& call = *e.as<graph::Call>();
        VMInstruction in{.dst = new_reg(), .node = e->loc.node_name};
        in.reg = materialize(compile(call.args[0]));
        if (op == "string.normalize") {
            const auto& a = static_cast<const ops::StringNormalizeAttrs&>(*call.attrs);
            in.op = VMOp::str_normalize;
            in.name = a.case_change;
            in.index = a.case_sensitive ? 1 : 0;
            in.strings = a.stopwords;
        } else if (op == "string.format") {
            in.op = VMOp::str_format;
        } else if (op == "string.parse") {
            in.op = VMOp::str_parse;
            in.dtype =
                graph::dl_dtype_of(static_cast<const ops::StringParseAttrs&>(*call.attrs).dtype);
        } else {
            user_error(e->loc) << "the VM compiler cannot run " << op;
        }
        int dst = in.dst;
        emit(std::move(in));
        // StringNormalizer's result length is known only now.
        if (op == "string.normalize") {
            match_tensor(e->type, dst, "the result of node '" + e->loc.node_name + "'", e->loc);
        }
        return {dst, {}};
    }

    // The program holds a string constant's values itself (the parameter blob holds numbers).
    Value compile_string_constant(const graph::Constant& c) {
        VMInstruction in{.op = VMOp::str_const, .dst = new_reg()};
        for (int64_t d : c.data.shape()) in.shape.push_back({{ShapeToken::Kind::constant, d}});
        for (std::string_view s : runtime::string_values(c.data, "a string constant")) {
            in.strings.emplace_back(s);
        }
        int dst = in.dst;
        emit(std::move(in));
        return {dst, {}};
    }

    // A slot for the dimension variable `d`, bound by the instruction about to be emitted.
    int new_slot(const PrimExpr& d, const SourceLoc& loc) {
        const Var* v = d.as<Var>();
        if (!v) user_error(loc) << "the executor binds variables, not " << d;
        if (slots_.count(v)) {
            user_error(loc) << "the dimension '" << v->name << "' is bound twice";
        }
        int slot = static_cast<int>(slot_names_.size());
        slots_[v] = slot;
        slot_names_.push_back(v->name);
        return slot;
    }

    // The tensors' values go to new slots (load_shape), then the checks run; the value passed
    // on is the first argument's.
    Value compile_bind_values(const Expr& e, const ops::BindValuesAttrs& attrs) {
        const auto& call = *e.as<graph::Call>();
        Value passed = compile(call.args[0]);
        size_t next = 0;
        for (size_t i = 1; i < call.args.size(); ++i) {
            VMInstruction in{.op = VMOp::load_shape, .node = e->loc.node_name};
            in.reg = materialize(compile(call.args[i]));
            int64_t count =
                graph::expect_tensor(call.args[i]->type, e->loc, "a bound tensor").num_elements();
            for (int64_t k = 0; k < count; ++k) {
                in.slots.push_back(new_slot(attrs.vars.at(next++), e->loc));
            }
            emit(std::move(in));
        }
        for (const auto& c : attrs.checks) {
            VMInstruction in{.op = VMOp::check_shape, .node = e->loc.node_name};
            in.what = (e->loc.op_type.empty() ? "" : e->loc.op_type + ": ") +
                      "the values of its shape operands do not fit its input";
            in.shape.push_back(shape_code(c, e->loc));
            emit(std::move(in));
        }
        return passed;
    }

    // The model node a call came from, or a name made from its callee.
    std::string node_name(const Expr& e) {
        if (!e->loc.node_name.empty()) return e->loc.node_name;
        const auto* tir = ops::call_tir_attrs(e);
        std::string callee = tir ? tir->kernel : ops::call_packed_attrs(e)->func;
        return callee + "_" + std::to_string(callee_uses_[callee]++);
    }

    static void flatten(const Value& v, std::vector<int>* regs) {
        if (!v.is_tuple()) {
            regs->push_back(v.reg);
            return;
        }
        for (const auto& f : v.fields) flatten(f, regs);
    }

    // One register holding `v`: a tuple of several values is built here.
    int materialize(const Value& v) {
        if (!v.is_tuple()) return v.reg;
        VMInstruction in{.op = VMOp::tuple, .dst = -1};
        for (const auto& f : v.fields) in.args.push_back(materialize(f));
        in.dst = new_reg();
        int dst = in.dst;
        emit(std::move(in));
        return dst;
    }

    // Drops each register after its last use (straight-line code), except the parameters and
    // the returned register, so the memory pool can hand its storage to later allocations.
    void add_kills(int returned) {
        std::vector<int> last_use(fn_.num_registers, -1);
        for (size_t i = 0; i < fn_.code.size(); ++i) {
            const VMInstruction& in = fn_.code[i];
            if (in.reg >= 0) last_use[in.reg] = static_cast<int>(i);
            for (int a : in.args) last_use[a] = static_cast<int>(i);
        }
        std::vector<std::vector<int>> kills(fn_.code.size());
        int num_params = static_cast<int>(f_.params.size());
        for (int r = num_params; r < fn_.num_registers; ++r) {
            if (r != returned && last_use[r] >= 0) kills[last_use[r]].push_back(r);
        }
        std::vector<VMInstruction> code;
        std::vector<int64_t> moved(fn_.code.size() + 1);  // old index → new index
        for (size_t i = 0; i < fn_.code.size(); ++i) {
            moved[i] = static_cast<int64_t>(code.size());
            code.push_back(std::move(fn_.code[i]));
            // A returned tuple's fields stay alive inside it; killing the registers is fine.
            if (!kills[i].empty()) code.push_back({.op = VMOp::kill, .args = kills[i]});
        }
        moved[fn_.code.size()] = static_cast<int64_t>(code.size());
        // Jumps only go forward (an If's branches), so a register's last use in the text is
        // its last use on every path; on the path that skips its kill it lives until the
        // function returns.
        for (auto& in : code) {
            if (in.op == VMOp::if_false || in.op == VMOp::goto_) in.index = moved[in.index];
        }
        fn_.code = std::move(code);
    }

    const graph::Function& f_;
    std::vector<std::pair<std::string, runtime::NDArray>>& params_;
    runtime::VMFunction fn_;
    std::unordered_map<const graph::ExprNode*, Value> values_;
    std::unordered_map<const Var*, int> slots_;
    std::vector<std::string> slot_names_;
    std::unordered_map<std::string, int> callee_uses_;
};

// Static and of numbers: what the graph executor's plan can hold (string tensors live only in
// the VM).
bool is_static_value(const graph::Type& t) {
    if (auto* tt = t.as<graph::TensorType>()) return tt->is_static() && !tt->dtype.is_string();
    if (auto* tt = t.as<graph::TupleType>()) {
        return std::all_of(tt->fields.begin(), tt->fields.end(), is_static_value);
    }
    return false;
}

}  // namespace

VMExecutable compile_vm(const graph::IRModule& m) {
    std::vector<std::pair<std::string, runtime::NDArray>> params;
    VMExecutable out;
    const auto& main = m.main();
    out.program.functions.push_back(FunctionCompiler("main", *main, params).compile());
    // The functions control flow calls (If's branches, Loop's bodies).
    for (const auto& [name, f] : m.functions) {
        if (name != "main")
            out.program.functions.push_back(FunctionCompiler(name, *f, params).compile());
    }
    // One output per field of a tuple result (each a tensor, a sequence or an optional).
    auto* tuple = main->body->type.as<graph::TupleType>();
    out.program.tuple_result = tuple != nullptr;
    size_t n = tuple ? tuple->fields.size() : 1;
    for (size_t i = 0; i < n; ++i) out.program.outputs.push_back("output" + std::to_string(i));
    out.params = runtime::pack_params(params, &out.program.params);
    runtime::validate_program(out.program, static_cast<int64_t>(out.params.size()));
    return out;
}

bool needs_vm(const graph::IRModule& m) {
    const auto& main = m.main();
    bool dynamic = false;
    for (const auto& p : main->params) dynamic |= !is_static_value(p->type);
    graph::post_order_visit(main->body, [&](const Expr& e) {
        dynamic |= !is_static_value(e->type) && !e.is<graph::Function>();
        if (auto* call = e.as<graph::Call>()) {
            // Every executor op but call_tir is the VM's (shape values, registry calls).
            dynamic |=
                !call->op.defined() || (call->op->executor_op && call->op->name != "call_tir");
        }
    });
    return dynamic;
}

}  // namespace anvil::driver
