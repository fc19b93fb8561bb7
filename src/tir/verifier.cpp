#include "tir/verifier.h"

#include <sstream>
#include <unordered_set>

#include "ir/expr_functor.h"
#include "ir/intrinsics.h"
#include "support/error.h"
#include "tir/printer.h"

namespace anvil::tir {

namespace {

constexpr size_t kMaxProblems = 20;

class Verifier : public ExprVisitor {
public:
    void func(const PrimFunc& f) {
        for (const auto& v : f.scalar_params) bind_var(v, "parameter");
        // Dimension variables are bound by the arguments' shapes (see dimension_var) before any
        // shape expression is checked, whichever parameter they first appear in.
        for (const auto& b : f.params) {
            if (!b.defined()) continue;
            for (const auto& e : b->shape) {
                if (const Var* v = dimension_var(e)) vars_.insert(v);
            }
        }
        for (const auto& b : f.params) {
            if (!b.defined()) {
                report("undefined buffer parameter");
                continue;
            }
            for (const auto& e : b->shape) expr(e);
            bind_buffer(b, "parameter");
        }
        stmt(f.body);
    }

    std::vector<std::string> problems;

    void visit(const PrimExpr& e) override {
        if (!e.defined()) {
            report("undefined expression");
            return;
        }
        ExprVisitor::visit(e);
    }

protected:
    void visit_(const Var* op) override {
        if (!vars_.count(op)) {
            report("use of undefined variable '" + op->name +
                   "' (not a parameter, nor bound by an enclosing loop or let)");
        }
    }

    void visit_(const Load* op) override {
        if (op->buffer.defined()) {
            check_buffer_use(op->buffer, "load from");
            check_access(*op->buffer, op->indices, op->dtype, "load from");
        } else {
            report("load from an undefined buffer");
        }
        for (const auto& i : op->indices) visit(i);
    }

#define ANVIL_X(name)                                                                             \
    void visit_(const name* op) override {                                                        \
        if (op->a.defined() && op->b.defined() && op->a.dtype() != op->b.dtype()) {               \
            report(std::string(#name) + " of mismatched types " + op->a.dtype().str() + " and " + \
                   op->b.dtype().str());                                                          \
        }                                                                                         \
        ExprVisitor::visit_(op);                                                                  \
    }
    ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X

    void visit_(const Select* op) override {
        if (op->cond.defined() && !op->cond.dtype().is_bool()) {
            report("select condition of type " + op->cond.dtype().str());
        }
        if (op->true_value.defined() && op->false_value.defined() &&
            op->true_value.dtype() != op->false_value.dtype()) {
            report("select branches of types " + op->true_value.dtype().str() + " and " +
                   op->false_value.dtype().str());
        }
        ExprVisitor::visit_(op);
    }

    void visit_(const Call* op) override {
        if (op->name == intrin::kPrefetch) {
            auto* load = op->args.size() == 1 ? op->args[0].as<Load>() : nullptr;
            if (!load || !load->dtype.is_scalar()) {
                report("prefetch takes one scalar load (the element whose cache line to fetch)");
            }
        }
        if (intrin::is_amx(op->name)) check_amx(op);
        ExprVisitor::visit_(op);
    }

    // Tile numbers and shapes are immediates; loads and stores name their first element.
    void check_amx(const Call* op) {
        if (op->args.size() != static_cast<size_t>(intrin::arity(op->name))) {
            report(op->name + " takes " + std::to_string(intrin::arity(op->name)) + " arguments");
            return;
        }
        const bool config = op->name == intrin::kAmxTileConfig;
        const bool memory = op->name == intrin::kAmxTileLoad || op->name == intrin::kAmxTileStore;
        for (size_t i = 0; i < op->args.size(); ++i) {
            if (memory && i == 1) {
                auto* load = op->args[i].as<Load>();
                if (!load || !load->dtype.is_scalar()) {
                    report(op->name + " takes the scalar load of the tile's first element");
                }
                continue;
            }
            if (memory && i == 2) continue;  // the stride
            const int64_t* v = as_const_int(op->args[i]);
            // Tile numbers; a configuration's rows (1..16) and row bytes (whole words, <= 64).
            const bool ok = !v           ? false
                            : !config    ? *v >= 0 && *v < intrin::kAmxTiles
                            : i % 2 == 0 ? *v >= 1 && *v <= 16
                                         : *v >= 4 && *v <= 64 && *v % 4 == 0;
            if (!ok) report(op->name + " takes constant tile numbers and shapes in range");
        }
    }

    void visit_(const Reduce*) override {
        report("Reduce in the loop IR (only tensor expressions may contain it)");
    }

private:
    void expr(const PrimExpr& e) {
        visit(e);
    }

    void stmt(const Stmt& s) {
        if (!s.defined()) {
            report("undefined statement");
            return;
        }
        const StmtNode* outer = current_;
        current_ = s.get();
        if (!binding_defined(s)) {
            current_ = outer;
            return;
        }
        switch (s->kind) {
            case StmtKind::LetStmt: {
                auto* op = s.as<LetStmt>();
                expr(op->value);
                if (op->value.defined() && op->var->dtype != op->value.dtype()) {
                    report("let '" + op->var->name + "' of type " + op->var->dtype.str() +
                           " bound to a value of type " + op->value.dtype().str());
                }
                scoped_var(op->var, "let", [&] { stmt(op->body); });
                break;
            }
            case StmtKind::For:
                loop(*s.as<For>());
                break;
            case StmtKind::Store: {
                auto* op = s.as<Store>();
                expr(op->value);
                for (const auto& i : op->indices) expr(i);
                if (!op->buffer.defined()) {
                    report("store to an undefined buffer");
                } else if (op->value.defined()) {
                    check_buffer_use(op->buffer, "store to");
                    check_access(*op->buffer, op->indices, op->value.dtype(), "store to");
                }
                break;
            }
            case StmtKind::Allocate: {
                auto* op = s.as<Allocate>();
                for (const auto& e : op->buffer->shape) expr(e);
                bind_buffer(op->buffer, "allocate");
                stmt(op->body);
                buffers_.erase(op->buffer.get());
                break;
            }
            case StmtKind::IfThenElse: {
                auto* op = s.as<IfThenElse>();
                check_cond(op->cond, "if");
                stmt(op->then_case);
                if (op->else_case.defined()) stmt(op->else_case);
                break;
            }
            case StmtKind::Evaluate:
                expr(s.as<Evaluate>()->value);
                break;
            case StmtKind::SeqStmt:
                for (const auto& x : s.as<SeqStmt>()->seq) stmt(x);
                break;
            case StmtKind::AssertStmt: {
                auto* op = s.as<AssertStmt>();
                expr(op->cond);
                if (op->cond.defined() && !op->cond.dtype().is_bool()) {
                    report("assert condition of type " + op->cond.dtype().str() +
                           " (expected bool, or a vector of bool)");
                }
                for (const auto& a : op->message_args) expr(a);
                if (op->body.defined()) stmt(op->body);
                break;
            }
            case StmtKind::CallPacked:
                for (const auto& a : s.as<CallPacked>()->args) {
                    if (a.buffer.defined()) check_buffer_use(a.buffer, "call_packed with");
                    for (const auto& d : a.shape) expr(d);
                    if (a.value.defined()) expr(a.value);
                }
                break;
        }
        current_ = outer;
    }

    // Reports a statement whose variable or buffer is missing (nothing below it can be checked).
    bool binding_defined(const Stmt& s) {
        bool ok = true;
        if (auto* l = s.as<LetStmt>()) ok = l->var.defined();
        if (auto* f = s.as<For>()) ok = f->var.defined();
        if (auto* a = s.as<Allocate>()) ok = a->buffer.defined();
        if (!ok) report(std::string(stmt_kind_name(s->kind)) + " without its variable or buffer");
        return ok;
    }

    void loop(const For& op) {
        const std::string& name = op.var->name;
        expr(op.min);
        expr(op.extent);
        if (!op.var->dtype.is_integer() || !op.var->dtype.is_scalar()) {
            report("loop variable '" + name + "' of type " + op.var->dtype.str() +
                   " (expected a scalar integer)");
        }
        if (op.min.defined() && op.extent.defined() &&
            (op.min.dtype() != op.var->dtype || op.extent.dtype() != op.var->dtype)) {
            report("loop '" + name + "' of type " + op.var->dtype.str() + " has bounds of type " +
                   op.min.dtype().str() + " and " + op.extent.dtype().str());
        }
        bool constant = op.extent.defined() && op.extent.is<IntImm>();
        if ((op.for_kind == ForKind::Vectorized || op.for_kind == ForKind::Unrolled) && !constant) {
            report(std::string(for_kind_name(op.for_kind)) + " loop '" + name +
                   "' has a non-constant extent (" +
                   (op.extent.defined() ? to_string(op.extent) : "undefined") + ")");
        }
        if (op.for_kind == ForKind::ThreadBinding && op.thread_tag.empty()) {
            report("thread_binding loop '" + name + "' without a thread tag");
        }
        bool parallel = op.for_kind == ForKind::Parallel;
        if (parallel && parallel_depth_ > 0) {
            report("parallel loop '" + name + "' nested inside another parallel loop");
        }
        parallel_depth_ += parallel;
        scoped_var(op.var, "loop", [&] { stmt(op.body); });
        parallel_depth_ -= parallel;
    }

    template <typename F>
    void scoped_var(const Ref<Var>& v, const char* what, F&& body) {
        bool fresh = bind_var(v, what);
        body();
        if (fresh) vars_.erase(v.get());
    }

    // Returns false when v was already in scope (it then stays bound by the outer binding).
    bool bind_var(const Ref<Var>& v, const char* what) {
        if (vars_.insert(v.get()).second) return true;
        report(std::string(what) + " binds variable '" + v->name +
               "' again while an enclosing binding of the same Var is in scope");
        return false;
    }

    void bind_buffer(const Ref<Buffer>& b, const char* what) {
        if (!buffers_.insert(b.get()).second) {
            report(std::string(what) + " binds buffer '" + b->name +
                   "' again while it is already a parameter or allocated");
        }
    }

    void check_buffer_use(const Ref<Buffer>& b, const char* what) {
        if (!buffers_.count(b.get())) {
            report(std::string(what) + " undefined buffer '" + b->name +
                   "' (not a parameter, nor allocated by an enclosing allocate)");
        }
    }

    void check_access(const Buffer& b, const std::vector<PrimExpr>& indices, DataType value,
                      const char* what) {
        std::string where = std::string(what) + " '" + b.name + "'";
        // One index is a row-major offset (storage flattened); otherwise one per dimension.
        if (indices.size() != b.shape.size() && indices.size() != 1) {
            report(where + " with " + std::to_string(indices.size()) + " indices, but it has " +
                   std::to_string(b.shape.size()) + " dimensions");
        }
        if (value.element_of() != b.dtype) {
            report(where + ": value of type " + value.str() + ", buffer of type " + b.dtype.str());
        }
        for (size_t k = 0; k < indices.size(); ++k) {
            if (!indices[k].defined()) continue;
            DataType t = indices[k].dtype();
            bool last = k + 1 == indices.size();
            if (!t.is_integer()) {
                report(where + ": index " + std::to_string(k) + " of type " + t.str());
            } else if (last ? t.lanes() != value.lanes()
                            : t.lanes() != 1 && t.lanes() != value.lanes()) {
                report(where + ": index " + std::to_string(k) + " has " +
                       std::to_string(t.lanes()) + " lanes, value has " +
                       std::to_string(value.lanes()));
            }
        }
        if (indices.empty() && value.lanes() != 1) {
            report(where + ": vector value of type " + value.str() + " without indices");
        }
    }

    void check_cond(const PrimExpr& c, const char* what) {
        expr(c);
        if (c.defined() && c.dtype() != DataType::bool_()) {
            report(std::string(what) + " condition of type " + c.dtype().str() +
                   " (expected bool)");
        }
    }

    void report(const std::string& message) {
        if (problems.size() >= kMaxProblems) return;
        std::string where;
        if (current_) {
            std::string text = print(Stmt(current_));
            text = text.substr(0, text.find('\n'));
            if (text.size() > 100) text = text.substr(0, 97) + "...";
            where = "\n    in: " + text;
            if (!current_->loc.empty()) where += "\n    from: " + current_->loc.str();
        }
        problems.push_back(message + where);
    }

    std::unordered_set<const Var*> vars_;
    std::unordered_set<const Buffer*> buffers_;
    int parallel_depth_ = 0;
    const StmtNode* current_ = nullptr;
};

}  // namespace

namespace {

// Every problem of `f` in one message, or "" when it has none.
std::string problems_of(const Ref<PrimFunc>& f) {
    ANVIL_CHECK(f.defined()) << "verify of an undefined function";
    Verifier v;
    v.func(*f);
    if (v.problems.empty()) return "";
    std::ostringstream msg;
    msg << "prim_func '" << f->name << "' is invalid (" << v.problems.size()
        << (v.problems.size() >= kMaxProblems ? "+" : "") << " problem"
        << (v.problems.size() == 1 ? "" : "s") << "):";
    for (const auto& p : v.problems) msg << "\n  " << p;
    return msg.str();
}

}  // namespace

void verify(const Ref<PrimFunc>& f) {
    std::string problems = problems_of(f);
    if (!problems.empty()) internal_error() << problems;
}

void check_user_function(const Ref<PrimFunc>& f, const SourceLoc& loc) {
    std::string problems = problems_of(f);
    if (!problems.empty()) user_error(loc) << problems;
}

}  // namespace anvil::tir
