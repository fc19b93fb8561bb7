// The virtual machine's program: what the VM (runtime/vm.h) runs, as data.
//
// The compiler (driver/vm_compiler.h) emits one program per model when the graph executor's
// static plan cannot run it: symbolic dimensions, shapes computed from data, control flow. It is
// stored in the artifact as JSON next to the kernels and the parameter blob, and read back with
// program_from_json, which validates everything the VM relies on, so a bad program is a UserError
// at load time, never a crash at run time.
//
// Machine model. Each function call gets a frame of registers and of shape slots:
//   registers  values: a tensor, a tuple (also sequences), or none (an empty optional);
//              a function's parameters arrive in registers 0 .. n-1.
//   slots      int64 values of symbolic dimensions (`n`, `seq`), bound by match_shape from an
//              argument's shape or by load_shape from a tensor's values, read by shape
//              expressions.
// A shape expression is postfix code over slots and constants (ShapeCode below): ["$0", 8, "*"]
// is slot 0 times 8.
//
// Instructions (JSON "op" and fields):
//   match_shape  reg, dims[], what, index  check a tensor's rank, dtype and dims; a dim is
//                                     {"bind": slot} (first sight), {"check": code} or
//                                     {"any": true}; index holds flags: 1 the value may be none
//                                     (an empty optional), 2 it is a sequence whose every
//                                     element is checked (no binding), 4 any rank (dims unused)
//   load_param   dst, name            a weight from the parameter blob
//   alloc        dst, shape[], dtype  a new tensor from the memory pool
//   call_kernel  kernel, args[], shape[], node, variants[]?  call a module function,
//                                     destination-passing: outputs are among args (allocated
//                                     before); the values of shape[] follow as int64 scalars
//                                     (symbolic dimensions). variants: [{"kernel": k, "when":
//                                     code}, ...], kernels taking the same arguments; the first
//                                     whose code is non-zero is called instead (a kernel
//                                     specialized for bucket sizes: when = ["$0", 8, "=="]).
//                                     A runtime that ignores the field calls `kernel`, which is
//                                     right at every size, so programs with variants keep
//                                     version 1
//   call_packed  func, args[], dst?, node  call a registry function (env.linear); dst = -1 when
//                                     it writes outputs passed among args
//   call_func    func, args[], dst    call another function of the program
//   load_shape   reg, slots[]         read an integer tensor's values into slots (a Range
//                                     bound, Expand's shape: shapes computed from data)
//   check_shape  shape[0], what, node UserError naming the node and `what` unless the shape
//                                     code is non-zero (a run-time condition on shapes)
//   reshape      dst, reg, args[0], slots[], index   the tensor in reg viewed (no copy) with the
//                                     shape in the integer tensor args[0], ONNX Reshape's rules
//                                     (0 copies the input's dimension unless index = 1, i.e.
//                                     allowzero; -1 is inferred); the result's dimensions are
//                                     bound to slots[]
//   shape_tensor dst, shape[], dtype, index  a 1-D int32 or int64 tensor of shape expressions'
//                                     values; index 1: a 0-D one of the one value (ONNX Shape →
//                                     Gather of a symbolic dimension, used as data)
//   tuple        dst, args[]          make a tuple (also an ONNX sequence);  get_item dst, reg,
//                                     index
//   seq_length   dst, reg             a sequence's length, an int64 scalar tensor
//   seq_at       dst, reg, args[pos]  the element at pos (a one-element integer tensor; negative
//                                     counts from the back)
//   seq_insert   dst, reg, args[t, pos?]  a new sequence with tensor t inserted before pos
//                                     (default: at the back)
//   seq_erase    dst, reg, args[pos?] a new sequence without the element at pos (default: the
//                                     last)
//   seq_split    dst, reg, args[split?], index, name  ONNX SplitToSequence of the tensor in reg
//                                     along axis `index` (non-negative): into parts of the sizes
//                                     in a 1-D split, of a 0-D split's size (the last part
//                                     smaller), or of size 1 without split, name "squeeze"
//                                     removing the axis from each (keepdims = 0); copies
//   seq_concat   dst, reg, index      the elements concatenated along axis `index` (negative
//                                     counts from the back), a copy; seq_stack: stacked on a new
//                                     axis `index`
//   str_normalize dst, reg, name, index, strings[]  ONNX StringNormalizer of the string tensor
//                                     in reg: name is the case change ("NONE", "LOWER",
//                                     "UPPER"), index 1 compares the stopwords strings[] case-
//                                     sensitively (vm_string.h)
//   str_format   dst, reg             the numbers in reg as a string tensor (Cast to STRING)
//   str_parse    dst, reg, dtype      the string tensor in reg read as numbers of dtype
//   str_const    dst, shape[], strings[]  a string tensor of that shape holding strings[] (a
//                                     string constant; the parameter blob holds numbers only)
//   none         dst                  an empty optional
//   has_value    dst, reg             a bool scalar tensor: whether the value is not none
//   get_value    dst, reg             the value of an optional; UserError naming the node when
//                                     it is none
//   move         dst, reg             copy a register
//   kill         regs[]               drop values no longer needed (their memory returns to the
//                                     pool)
//   loop         name, args[], dst, index, shape[], scan_ranks[], scan_dtypes[]
//                                     ONNX Loop over the program
//                                     function `name`: args are (max_trip, cond, v..., c...) with
//                                     index = the number of carried v's; each iteration calls
//                                     name(i, cond, v..., c...) → (cond, v..., s...) while
//                                     i < max_trip and cond; dst gets the tuple (v..., S...), each
//                                     S the iteration's s stacked on a new leading axis (a copy);
//                                     after zero iterations S is an empty tensor of dtype
//                                     scan_dtypes[k] and shape [0] + the element shape given by
//                                     scan_ranks[k] entries of shape[]
//   if_false     reg, target          jump to instruction `target` unless the scalar tensor in
//                                     reg is non-zero
//   goto         target
//   ret          reg                  return a value to the caller
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ndarray.h"
#include "runtime/param_blob.h"

namespace anvil::runtime {

// Postfix integer code: each token is a constant, a slot or an operator applied to the two
// values below it (floordiv and floormod round toward negative infinity, as shapes do).
// JSON: integers are constants, "$3" is slot 3, "+", "-", "*", "/" (floordiv), "%" (floormod),
// "min", "max", "==", "!=", "<", "<=", "&&", "||" and "select" (of the three values below it).
struct ShapeToken {
    enum class Kind {
        constant,
        slot,
        add,
        sub,
        mul,
        floordiv,
        floormod,
        min,
        max,
        eq,  // comparisons and logic give 1 or 0 (run-time shape checks, selects)
        ne,
        lt,
        le,
        land,
        lor,
        select,  // three values below: cond, then, else
    };
    Kind kind = Kind::constant;
    int64_t value = 0;  // the constant or the slot
};
using ShapeCode = std::vector<ShapeToken>;

// One dimension of match_shape: bind a slot, check against a value, or accept any.
struct DimMatch {
    int bind_slot = -1;  // >= 0: bind
    ShapeCode check;     // otherwise; empty: any size
};

// The flags of match_shape's index.
enum MatchFlags : int64_t {
    kMatchMayBeNone = 1,
    kMatchSequence = 2,
    kMatchAnyRank = 4,
};

enum class VMOp {
    match_shape,
    load_param,
    alloc,
    call_kernel,
    call_packed,
    call_func,
    load_shape,
    check_shape,
    reshape,
    shape_tensor,
    tuple,
    get_item,
    seq_length,
    seq_at,
    seq_insert,
    seq_erase,
    seq_split,
    seq_concat,
    seq_stack,
    str_normalize,
    str_format,
    str_parse,
    str_const,
    none,
    has_value,
    get_value,
    move,
    kill,
    loop,
    if_false,
    goto_,
    ret,
};
const char* vm_op_name(VMOp op);

// An alternative kernel of call_kernel, called when `when` evaluates to non-zero.
struct VMKernelVariant {
    std::string kernel;
    ShapeCode when;
};

struct VMInstruction {
    VMOp op = VMOp::ret;
    int dst = -1;
    int reg = -1;
    std::vector<int> args;         // registers (call args, tuple fields, killed registers)
    std::vector<int> slots;        // load_shape
    std::string name;              // param, kernel, packed or program function
    std::string node;              // the model node, for messages
    std::string what;              // match_shape: "input 'x'"
    int64_t index = 0;             // get_item; the jump target of if_false / goto; reshape's
                                   // allowzero
    std::vector<ShapeCode> shape;  // alloc, shape_tensor
    std::vector<DimMatch> dims;    // match_shape
    std::vector<int> scan_ranks;   // loop: each scan output's element rank and dtype
    std::vector<DLDataType> scan_dtypes;
    std::vector<std::string> strings;       // str_normalize's stopwords, str_const's values
    std::vector<VMKernelVariant> variants;  // call_kernel: specialized kernels, tried in order
    DLDataType dtype{kDLFloat, 32, 1};
    bool check_dtype = true;  // match_shape
};

struct VMFunction {
    std::string name;
    std::vector<std::string> params;  // names, for messages and set_input
    int num_registers = 0;
    int num_slots = 0;
    std::vector<std::string> slot_names;  // the symbolic dimensions' names, for messages
    std::vector<VMInstruction> code;
};

struct VMProgram {
    static constexpr int kVersion = 1;
    std::vector<VMFunction> functions;  // functions[0] is the entry ("main")
    // Names of the entry's results: the fields of the tuple it returns when `tuple_result`,
    // else its one value. A result may itself be a sequence (a tuple of tensors) or none.
    std::vector<std::string> outputs;
    // JSON "tuple_result"; absent (programs before it), and wherever there are several outputs:
    // true.
    bool tuple_result = false;
    ParamTable params;
};

// Parses and validates. UserError "vm program: functions[0] ('main') code[3] (alloc): ...".
VMProgram program_from_json(std::string_view json);
std::string program_to_json(const VMProgram& program, int indent = -1);

// Registers, slots, jump targets, callee names and param names in range; `params_size` >= 0
// checks the params lie in the blob.
void validate_program(const VMProgram& program, int64_t params_size = -1);

// Evaluates shape code over `slots`; UserError on division by zero or malformed code.
int64_t eval_shape_code(const ShapeCode& code, const std::vector<int64_t>& slots);
// Infix text of shape code, for messages: "(n * 8)"; slots print as their names when given.
std::string shape_code_text(const ShapeCode& code, const std::vector<std::string>& slot_names = {});

}  // namespace anvil::runtime
