// A reference interpreter for the loop IR, used by the pass tests to check that a pass keeps
// the meaning of a program: run it before and after on the same inputs and compare every buffer.
//
// Values are vectors of lanes. bfloat16 values are held as the doubles they are; AMX tiles as
// bytes, the elements they load encoded as the hardware holds them (little-endian). Integers are
// held as int64 and wrapped to their width after every operation; floats are held as double and
// rounded to float32 after every float32 operation, so float32 programs compute exactly what
// float32 hardware computes for + - * / (double rounding is exact for those). Buffer contents are
// doubles. Out-of-bounds accesses, reads of unbound variables and unknown calls throw
// std::runtime_error so a wrong pass fails loudly.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"
#include "tir/stmt.h"

namespace anvil::tir::testing {

struct Value {
    DataType dtype;
    std::vector<int64_t> i;  // integer and bool lanes
    std::vector<double> f;   // float lanes

    int lanes() const { return dtype.lanes(); }
    double as_double(int lane) const;
    int64_t as_int(int lane) const;
};

class Interpreter {
public:
    // Binds a buffer to storage the caller owns (row-major, product of the shape elements).
    void bind_buffer(const Ref<Buffer>& b, std::vector<double>* data);
    void bind_var(const Ref<Var>& v, Value value);
    void bind_int(const Ref<Var>& v, int64_t x);

    void run(const Stmt& s);
    Value eval(const PrimExpr& e);

    // Statements executed (to check that an interpreted run did real work).
    int64_t steps() const { return steps_; }

private:
    int64_t flat_offset(const Buffer* b, const std::vector<int64_t>& idx);
    // Lanes where `mask` (when given) is false are not read and left zero.
    Value eval_load(const Load* op, const Value* mask = nullptr);
    Value eval_guarded(const Call* op, const Value& cond, const Value* needed);
    void exec_store(const Store* op);
    // The packed word operations (tir_interpreter_packed.cpp): bitwise_* and shifts on integer
    // lanes, dot_u8s8 and dot_bf16; and the AMX tile calls on the tile registers below.
    Value eval_packed(const Call* op, const std::vector<Value>& args);
    void exec_amx(const Call* op);
    // The flat element index of an AMX call's address argument i (a scalar load).
    int64_t tile_base(const Call* op, size_t i, std::vector<double>** data);

    struct Tile {
        int64_t rows = 0, bytes = 0;
        std::vector<uint8_t> data;  // rows x bytes, row-major
    };
    std::vector<Tile> tiles_ = std::vector<Tile>(8);

    std::unordered_map<const Buffer*, std::vector<double>*> buffers_;
    std::unordered_map<const Var*, std::vector<Value>> vars_;  // a stack per variable
    std::vector<std::vector<double>> owned_;                   // Allocate storage
    int64_t steps_ = 0;
};

// Deterministic pseudo-random contents for every buffer of a function, keyed by position.
std::vector<std::vector<double>> make_inputs(const Ref<PrimFunc>& f,
                                             const std::vector<int64_t>& scalar_args = {},
                                             uint64_t seed = 1);

// Runs `f` over copies of `inputs` (one vector per buffer parameter, in order) with the given
// scalar parameters and returns the final buffer contents.
std::vector<std::vector<double>> run_func(const Ref<PrimFunc>& f,
                                          std::vector<std::vector<double>> inputs,
                                          const std::vector<int64_t>& scalar_args = {});

// Empty string when `a` and `b` hold the same numbers bit for bit (NaN equals NaN); otherwise
// a description of the first difference.
std::string compare_buffers(const std::vector<std::vector<double>>& a,
                            const std::vector<std::vector<double>>& b);

}  // namespace anvil::tir::testing
