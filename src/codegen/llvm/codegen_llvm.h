// Translation of lowered loop IR into LLVM IR (internal to src/codegen/llvm).
//
// Input: PrimFuncs after the TIR pipeline: flattened storage (one index per Load/Store), no
// Vectorized loops that could be vectorized (leftovers become serial loops with a vectorize hint),
// no GPU thread bindings.
//
// For each PrimFunc `f` the module gets:
//   int f(const AnvilValue*, const int*, int, AnvilValue*, int*, void*)   packed entry: checks
//       the arguments (packed_wrapper.cpp) and calls
//   internal int f.impl(ptr noalias align 64 A, ..., scalars..., shape vars...)  the work;
//       0 on success, -1 after anvil_set_last_error.
//   internal int f.lambda.N(int task, int num_tasks, ptr closure) and f.par.N(...) per
//       parallel loop (parallel.cpp).
//   internal ptr __anvil_packed.NAME: the registry handle of each function the module's
//       CallPackeds name (call_packed.cpp).
// Expressions are in codegen_expr.cpp, statements and functions in codegen_stmt.cpp; the
// optimization pipeline, JIT and file output in llvm_module.cpp.
//
// Representation in registers: bool is i1 (i8 in memory), float16 is `half`, bfloat16 is its i16
// bit pattern and every bfloat16 operation goes through float32 with round-to-nearest-even.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/target.h"
#include "tir/stmt.h"

namespace anvil::codegen {

// Alignment of buffers the runtime hands to kernels and of stack allocations (bytes).
inline constexpr int kBufferAlign = 64;
// What anvil_workspace_alloc is assumed to return at least (malloc's guarantee on 64-bit Linux).
inline constexpr int kWorkspaceAlign = 16;
// Constant-size allocations up to this size go on the stack (a staging buffer made per channel
// inside a parallel loop would otherwise cost a heap allocation per iteration); larger ones use
// the runtime's workspace so that threads with small stacks do not overflow.
inline constexpr int64_t kMaxStackAllocBytes = 256 * 1024;
// Size of the stack buffers formatted error messages are written to.
inline constexpr int kMessageBytes = 1024;
// Constant-size allocations of one function together stay under this on the stack; later ones
// use the workspace.
inline constexpr int64_t kMaxStackBytesPerFunction = 512 * 1024;
// Vector loads with a constant stride up to this become a contiguous load and a shuffle; larger
// strides gather.
inline constexpr int kMaxShuffledStride = 4;

// Variables a statement uses but does not define, and buffers it reads or writes but does not
// allocate, in first-use order.
struct FreeSymbols {
    std::vector<Ref<Var>> vars;
    std::vector<Ref<Buffer>> buffers;
};
FreeSymbols collect_free_symbols(const tir::Stmt& s);

// `s` with every '%' doubled, for use inside an snprintf format.
std::string escape_percent(const std::string& s);

class CodeGenLLVM {
public:
    CodeGenLLVM(llvm::Module* module, const Target& target);

    // Emits the packed entry `f.name` and everything it calls.
    void add_function(const tir::PrimFunc& f);
    // Emits __anvil_function_names listing `names`.
    void add_function_names(const std::vector<std::string>& names);
    // Emits ANVIL_MODULE_RELEASE_SYMBOL when a kernel caches registry functions (call_packed.cpp);
    // returns whether it did. Call after every add_function.
    bool add_packed_release();

private:
    struct BufferInfo {
        llvm::Value* ptr = nullptr;
        int64_t align = 1;  // bytes the base pointer is known to be aligned to
    };
    // A value the body of a function receives as a parameter.
    struct Param {
        Ref<Var> var;        // set for a scalar
        Ref<Buffer> buffer;  // set for a buffer's data pointer
        int64_t align = 1;   // for a buffer: bytes its data pointer is aligned to
    };

    // ---- functions (codegen_stmt.cpp)
    // Defines `internal i32 name(params...)` computing `body`; returns it.
    llvm::Function* emit_body_function(const std::string& name, const std::vector<Param>& params,
                                       const tir::Stmt& body);
    void emit_error_return();
    // Calls anvil_set_last_error with a constant message then returns -1.
    void emit_fail(const std::string& message);
    // The same with each `{}` of `message` replaced by the next of `values` (i64, decimal).
    void emit_fail_formatted(const std::string& message, const std::vector<llvm::Value*>& values);
    llvm::FunctionCallee runtime_function(const std::string& name);
    llvm::Value* global_string(const std::string& s);

    // ---- expressions (codegen_expr.cpp)
    llvm::Value* emit(const PrimExpr& e);
#define ANVIL_X(name) llvm::Value* emit_(const name* op);
    ANVIL_FOR_EACH_EXPR(ANVIL_X)
#undef ANVIL_X
    llvm::Value* emit_arith(const BinaryExpr* op, llvm::Instruction::BinaryOps float_op,
                            llvm::Instruction::BinaryOps int_op,
                            llvm::Instruction::BinaryOps bool_op);
    llvm::Value* emit_if_then_else(const Call* op);
    llvm::Value* emit_guarded_load(const Call* if_then_else, llvm::Value* cond,
                                   llvm::Value* needed = nullptr);
    llvm::Value* emit_branch_lanes(const PrimExpr& e, llvm::Value* lanes);
    // Emits each arm's value in its block, each block then branching to `join`; returns the phi
    // of the values in `join` (where the builder is left).
    using Arm = std::pair<llvm::BasicBlock*, std::function<llvm::Value*()>>;
    llvm::Value* join_arms(llvm::BasicBlock* join, const std::vector<Arm>& arms);
    llvm::Value* emit_masked_load(const Load* op, llvm::Value* mask, llvm::Value* otherwise);
    // prefetch(buf[index]): llvm.prefetch of the element's address (no inbounds: it may lie
    // past the buffer's end); the call's value is 0.
    llvm::Value* emit_prefetch(const Call* op);
    // The AMX tile calls (ir/intrinsics.h; codegen_amx.cpp); the call's value is 0.
    llvm::Value* emit_amx(const Call* op);
    // The address of argument i of an AMX call, a scalar load (the tile's first element).
    llvm::Value* tile_address(const Call* op, size_t i);
    // Odd-length contiguous accesses as masked ones of `masked_width` lanes (0: plain access).
    int masked_width(const Buffer& buffer, DataType t) const;
    llvm::Value* lane_mask(int lanes, int width);
    static std::vector<int> first_lanes(int lanes);
    llvm::Value* emit_call_intrinsic(const Call* op);
    llvm::Value* emit_bitwise(const Call* op);
    llvm::Value* emit_fixed_point_multiply(const Call* op);
    llvm::Value* emit_doubling_high_mul(llvm::Value* a, llvm::Value* m, int lanes);
    // acc + dot_u8s8(a, b) (ir/intrinsics.h): AVX-512 VNNI's vpdpbusd where the target has it
    // for the call's lanes (vpdpbusd_for), else two pmaddwd on the 16-bit halves of the lanes
    // (x86: pmaddwd_for), else the portable form (bytes widened to int32, multiplied and summed
    // in fours).
    llvm::Value* emit_dot_u8s8(const Call* op, llvm::Value* acc);
    // The vpdpbusd intrinsic for `lanes` int32 lanes on the target; not_intrinsic if none.
    unsigned vpdpbusd_for(int lanes) const;
    // The pmaddwd intrinsic for `lanes` int32 lanes on an x86 target (AVX-512BW: 16, AVX2: 8,
    // SSE2: 4); not_intrinsic if none.
    unsigned pmaddwd_for(int lanes) const;
    // The widest pmaddwd that computes `lanes` lanes in a power-of-two number of chunks; 0 if
    // none.
    int pmaddwd_width(int lanes) const;
    // acc + dot_bf16(a, b) (ir/intrinsics.h): AVX-512 BF16's vdpbf16ps where the target has it
    // for the call's lanes (vdpbf16ps_for), else the portable form (each bfloat16 widened to
    // float32, multiplied, the pairs summed).
    llvm::Value* emit_dot_bf16(const Call* op, llvm::Value* acc);
    // The vdpbf16ps intrinsic for `lanes` float32 lanes on the target; not_intrinsic if none.
    unsigned vdpbf16ps_for(int lanes) const;
    llvm::Value* emit_math(const std::string& name, DataType t, std::vector<llvm::Value*> args);
    llvm::Value* emit_libm(const std::string& fname, DataType t, llvm::Value* x);
    llvm::Value* emit_exp_f32(llvm::Value* x);  // codegen_exp.cpp
    llvm::Value* emit_cast(DataType from, DataType to, llvm::Value* v);
    llvm::Value* emit_floor_div_mod(const BinaryExpr* op, bool is_div);
    llvm::Value* bf16_to_f32(llvm::Value* v);
    llvm::Value* f32_to_bf16(llvm::Value* v);
    // float32 view of a floating value of type t (half/bfloat widen, others unchanged)
    llvm::Value* to_compute_float(DataType t, llvm::Value* v);
    llvm::Value* from_compute_float(DataType t, llvm::Value* v);
    // Address of a buffer element, vector of addresses for vector indices.
    // `inbounds`: false for masked accesses, whose masked-off lanes may point outside the buffer.
    llvm::Value* element_address(const BufferInfo& b, DataType elem, llvm::Value* index,
                                 bool inbounds = true);
    llvm::Align access_align(const BufferInfo& b, DataType elem, const PrimExpr& index, int lanes);
    int64_t known_multiple(const PrimExpr& e);
    llvm::Value* index_value(const PrimExpr& e);
    const BufferInfo& buffer_info(const Ref<Buffer>& b);

    // ---- statements (codegen_stmt.cpp)
    void emit_stmt(const tir::Stmt& s);
#define ANVIL_X(name) void emit_stmt_(const tir::name* op);
    ANVIL_FOR_EACH_STMT(ANVIL_X)
#undef ANVIL_X
    void emit_serial_loop(const tir::For* op, llvm::Value* begin, llvm::Value* end);
    void emit_parallel_for(const tir::For* op);  // parallel.cpp
    // The registry handle of `func`, looked up on first use (call_packed.cpp).
    llvm::Value* packed_function_handle(const std::string& func);

    // ---- types (codegen_expr.cpp)
    llvm::Type* llvm_type(DataType t);     // in registers
    llvm::Type* storage_type(DataType t);  // in memory (bool is i8)

    // ---- packed entry (packed_wrapper.cpp)
    void emit_packed_wrapper(const tir::PrimFunc& f, llvm::Function* impl,
                             const std::vector<Param>& impl_params);

    llvm::Module* module_;
    llvm::LLVMContext& ctx_;
    Target target_;
    llvm::IRBuilder<> builder_;
    llvm::Type* i32_;
    llvm::Type* i64_;
    llvm::PointerType* ptr_;

    // State of the function being emitted.
    std::string func_name_;  // the PrimFunc's name, for messages and symbol names
    llvm::Function* function_ = nullptr;
    llvm::BasicBlock* entry_ = nullptr;
    std::unordered_map<const Var*, llvm::Value*> vars_;
    std::unordered_map<const Var*, int64_t> var_multiple_;
    std::unordered_map<const Buffer*, BufferInfo> buffers_;
    // Workspace allocations live at this point; an error return frees them.
    std::vector<llvm::Value*> live_workspace_;
    // Where emit_fail_formatted writes its message (made on first use in each function).
    llvm::Value* message_buffer_ = nullptr;
    // Signed integer arithmetic in an index cannot overflow (it would address nothing valid),
    // so it is emitted with `nsw` to let LLVM analyse addresses.
    bool in_index_ = false;
    int parallel_count_ = 0;
    int64_t stack_bytes_ = 0;  // stack taken by the function's constant-size allocations
};

}  // namespace anvil::codegen
