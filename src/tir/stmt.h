// The loop IR (TIR): statements over scalar expressions (ir/expr.h).
//
// Semantics:
// - SeqStmt runs its statements in order. LetStmt binds `var` to `value` (evaluated once) in body.
// - For runs body for var = min, min+1, ..., min+extent-1. The kind says what the code generator
//   may assume and must produce:
//     Serial      plain loop.
//     Parallel    iterations are independent; codegen outlines the body and runs chunks of the
//                 range on the runtime thread pool. Must not be nested in another Parallel.
//     Vectorized  iterations are independent and extent is a constant; vectorize_loops turns
//                 the body into vector operations of `extent` lanes (or a scalar loop where
//                 it cannot).
//     Unrolled    extent is a constant; unroll_loops replicates the body.
//     ThreadBinding  GPU: the loop is replaced by the thread index `thread_tag`.
// - Store writes value (scalar or vector) to buffer at indices; see Load for index rules.
// - Allocate creates `buffer` (its shape gives the size) for the duration of body. Contents
//   are undefined on entry. "local" buffers of constant size live on the stack.
// - IfThenElse runs then_case when cond holds, else_case (optional) otherwise.
// - Evaluate computes an expression for its side effects (a call).
// - AssertStmt raises a runtime error carrying `message` when cond is false. A vector cond fails
//   when any lane is false. Each `{}` in the message stands for the next of `message_args`
//   (integers, printed in decimal); a vector argument has cond's lanes and prints its value at
//   the first lane where cond is false. The arguments are evaluated only when the assert fails.
// - CallPacked calls the function registered under `func` in the runtime's global registry
//   (anvil_func_get_global) with `args`: a tensor argument passes as a DLTensor over its buffer's
//   memory with the argument's `shape` (compact row-major, on the CPU), a scalar as an int64
//   (integers and bool) or a float64. The callee may read and write the tensors. When it fails,
//   the kernel fails with the callee's message; its return value is discarded. The name is looked
//   up at the first call and kept, so a function must be registered before the kernel runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "support/source_loc.h"

namespace anvil::tir {

#define ANVIL_FOR_EACH_STMT(X) \
    X(LetStmt)                 \
    X(For)                     \
    X(Store)                   \
    X(Allocate)                \
    X(IfThenElse)              \
    X(Evaluate)                \
    X(SeqStmt)                 \
    X(AssertStmt)              \
    X(CallPacked)

enum class StmtKind : uint8_t {
#define ANVIL_X(name) name,
    ANVIL_FOR_EACH_STMT(ANVIL_X)
#undef ANVIL_X
};

const char* stmt_kind_name(StmtKind kind);

struct StmtNode : Object {
    StmtNode(StmtKind k, SourceLoc l) : kind(k), loc(std::move(l)) {}
    const StmtKind kind;
    const SourceLoc loc;
};

using Stmt = Ref<StmtNode>;

struct LetStmt : StmtNode {
    static constexpr StmtKind kKind = StmtKind::LetStmt;
    LetStmt(Ref<Var> v, PrimExpr val, Stmt b, SourceLoc l = {})
        : StmtNode(kKind, std::move(l)),
          var(std::move(v)),
          value(std::move(val)),
          body(std::move(b)) {}
    const Ref<Var> var;
    const PrimExpr value;
    const Stmt body;
};

enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBinding };
const char* for_kind_name(ForKind kind);
bool parse_for_kind(const std::string& text, ForKind* out);

struct For : StmtNode {
    static constexpr StmtKind kKind = StmtKind::For;
    For(Ref<Var> v, PrimExpr mn, PrimExpr ext, ForKind k, Stmt b, std::string tag = "",
        SourceLoc l = {})
        : StmtNode(kKind, std::move(l)),
          var(std::move(v)),
          min(std::move(mn)),
          extent(std::move(ext)),
          for_kind(k),
          body(std::move(b)),
          thread_tag(std::move(tag)) {}
    const Ref<Var> var;
    const PrimExpr min;
    const PrimExpr extent;
    const ForKind for_kind;
    const Stmt body;
    const std::string thread_tag;  // for ThreadBinding: "threadIdx.x", "blockIdx.y", ...
};

struct Store : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Store;
    Store(Ref<Buffer> b, PrimExpr v, std::vector<PrimExpr> idx, SourceLoc l = {})
        : StmtNode(kKind, std::move(l)),
          buffer(std::move(b)),
          value(std::move(v)),
          indices(std::move(idx)) {}
    const Ref<Buffer> buffer;
    const PrimExpr value;
    const std::vector<PrimExpr> indices;
};

struct Allocate : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Allocate;
    Allocate(Ref<Buffer> b, Stmt bd, SourceLoc l = {})
        : StmtNode(kKind, std::move(l)), buffer(std::move(b)), body(std::move(bd)) {}
    const Ref<Buffer> buffer;
    const Stmt body;
};

struct IfThenElse : StmtNode {
    static constexpr StmtKind kKind = StmtKind::IfThenElse;
    IfThenElse(PrimExpr c, Stmt t, Stmt e, SourceLoc l = {})
        : StmtNode(kKind, std::move(l)),
          cond(std::move(c)),
          then_case(std::move(t)),
          else_case(std::move(e)) {}
    const PrimExpr cond;
    const Stmt then_case;
    const Stmt else_case;  // may be undefined
};

struct Evaluate : StmtNode {
    static constexpr StmtKind kKind = StmtKind::Evaluate;
    Evaluate(PrimExpr v, SourceLoc l = {}) : StmtNode(kKind, std::move(l)), value(std::move(v)) {}
    const PrimExpr value;
};

struct SeqStmt : StmtNode {
    static constexpr StmtKind kKind = StmtKind::SeqStmt;
    SeqStmt(std::vector<Stmt> s, SourceLoc l = {})
        : StmtNode(kKind, std::move(l)), seq(std::move(s)) {}
    const std::vector<Stmt> seq;
};

struct AssertStmt : StmtNode {
    static constexpr StmtKind kKind = StmtKind::AssertStmt;
    AssertStmt(PrimExpr c, std::string m, Stmt b, SourceLoc l = {}, std::vector<PrimExpr> a = {})
        : StmtNode(kKind, std::move(l)),
          cond(std::move(c)),
          message(std::move(m)),
          body(std::move(b)),
          message_args(std::move(a)) {}
    const PrimExpr cond;
    const std::string message;
    const Stmt body;  // may be undefined
    const std::vector<PrimExpr> message_args;
};

// One argument of a CallPacked: a tensor (buffer set) or a scalar (value set).
struct PackedArg {
    Ref<Buffer> buffer;
    // The tensor's shape as the callee sees it: the buffer's shape when the call was made, kept
    // when flatten_storage later gives an allocated buffer one dimension.
    std::vector<PrimExpr> shape;
    PrimExpr value;
};

struct CallPacked : StmtNode {
    static constexpr StmtKind kKind = StmtKind::CallPacked;
    CallPacked(std::string f, std::vector<PackedArg> a, SourceLoc l = {})
        : StmtNode(kKind, std::move(l)), func(std::move(f)), args(std::move(a)) {}
    const std::string func;
    const std::vector<PackedArg> args;
};

// Checked constructors (InternalError on ill-typed input).
Stmt make_let(Ref<Var> var, PrimExpr value, Stmt body, SourceLoc loc = {});
Stmt make_for(Ref<Var> var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
              std::string thread_tag = "", SourceLoc loc = {});
Stmt make_store(Ref<Buffer> buffer, PrimExpr value, std::vector<PrimExpr> indices,
                SourceLoc loc = {});
Stmt make_allocate(Ref<Buffer> buffer, Stmt body, SourceLoc loc = {});
Stmt make_if(PrimExpr cond, Stmt then_case, Stmt else_case = Stmt(), SourceLoc loc = {});
Stmt make_evaluate(PrimExpr value, SourceLoc loc = {});
// Flattens nested SeqStmts, drops undefined entries; one statement is returned as itself.
Stmt make_seq(std::vector<Stmt> seq, SourceLoc loc = {});
// `message` holds one `{}` per message argument.
Stmt make_assert(PrimExpr cond, std::string message, Stmt body, SourceLoc loc = {},
                 std::vector<PrimExpr> message_args = {});
// The number of `{}` placeholders in an assert message.
size_t count_message_placeholders(const std::string& message);
// Arguments made by tensor_arg / scalar_arg; scalars must be scalar numbers (not handles).
Stmt make_call_packed(std::string func, std::vector<PackedArg> args, SourceLoc loc = {});
PackedArg tensor_arg(Ref<Buffer> buffer);
PackedArg scalar_arg(PrimExpr value);

// A compiled unit: a named function over buffers (tensors) and scalar parameters.
// The caller passes one DLTensor per buffer parameter, in order, then the scalars.
struct PrimFunc : Object {
    PrimFunc(std::string n, std::vector<Ref<Buffer>> p, std::vector<Ref<Var>> s, Stmt b)
        : name(std::move(n)),
          params(std::move(p)),
          scalar_params(std::move(s)),
          body(std::move(b)) {}
    const std::string name;
    const std::vector<Ref<Buffer>> params;
    const std::vector<Ref<Var>> scalar_params;
    const Stmt body;
};

Ref<PrimFunc> make_prim_func(std::string name, std::vector<Ref<Buffer>> params, Stmt body,
                             std::vector<Ref<Var>> scalar_params = {});
Ref<PrimFunc> with_body(const Ref<PrimFunc>& f, Stmt body);

}  // namespace anvil::tir
