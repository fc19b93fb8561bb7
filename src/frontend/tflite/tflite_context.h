// What a TFLite converter sees of its operator (internal to frontend/tflite).
//
// TFLite computes in NHWC; Anvil's convolutions, pools and their layout pass work on NCHW. The
// importer holds a 4-D tensor either as TFLite lays it out or "channels first" (its NCHW
// transpose). Convolutions, pools and resizes make channels-first results; ops that do not care
// about the order of axes (elementwise ops, activations, quantize) keep their operand's form, and
// those with an axis (concatenation, softmax, reductions, padding) map it. Every other op reads
// its operands in TFLite's layout (input_tflite), so a transpose appears only where a
// channels-first region ends — at a reshape or a model output — not at every op.
//
// Every call a converter makes carries the operator's SourceLoc: the model file, "operator N",
// its builtin name and version, so a type rule's error names the operator.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "frontend/node_builder.h"
#include "frontend/tflite/custom_options.h"
#include "frontend/tflite/tflite_model.h"

namespace anvil::frontend::tflite {

// A tensor's value as the importer holds it.
struct TfValue {
    graph::Expr expr;
    bool channels_first = false;  // a 4-D NHWC tensor held as its NCHW transpose
};

// NHWC → NCHW and back.
inline const std::vector<int64_t> kToChannelsFirst = {0, 3, 1, 2};
inline const std::vector<int64_t> kToChannelsLast = {0, 2, 3, 1};

// Where a converter's operands come from: the importer (values made so far, constants made on
// first use).
class ValueSource {
public:
    virtual ~ValueSource() = default;
    virtual const TfValue& value(int32_t tensor, const NodeBuilder& user) = 0;
};

// The element type of TFLite tensor type `type`; UserError at `at`, naming `what`, for one Anvil
// has no type for.
DataType dtype_of_tensor_type(int8_t type, const NodeBuilder& at, const std::string& what);
// `x` transposed with `perm`, at `at`'s location.
graph::Expr transpose_at(const NodeBuilder& at, const graph::Expr& x,
                         const std::vector<int64_t>& perm);

class TfContext : public NodeBuilder {
public:
    TfContext(const TfliteModel& model, const TfliteSubgraph& graph, const TfliteOperator& op,
              SourceLoc loc, ValueSource& values, bool xnnpack_rounding = false);

    int32_t builtin() const { return code_.builtin; }
    int32_t version() const { return code_.version; }
    // Whether quantized products rescale their sums as XNNPACK's kernels do (in float32) rather
    // than as TFLite's reference kernels (in fixed point): TfliteImportOptions::rounding.
    bool xnnpack_rounding() const { return xnnpack_rounding_; }

    // The operator's operand count (omitted optional operands included) and whether operand i
    // is given.
    size_t num_inputs() const { return op_.inputs.size(); }
    bool has_input(size_t i) const { return i < op_.inputs.size() && op_.inputs[i] >= 0; }
    size_t num_outputs() const { return op_.outputs.size(); }
    // UserError unless the operator has between `min` and `max` operands and `outputs` results,
    // and gives the first `min` (or, when `required` is given, those listed).
    void expect_arity(size_t min, size_t max, size_t outputs,
                      std::initializer_list<size_t> required = {}) const;

    const TfliteTensor& input_tensor(size_t i) const;
    // UserError unless operand 0 and result 0 have one element type (a quantized operator that
    // rescales but does not convert).
    void expect_same_type() const;
    const TfliteTensor& output_tensor(size_t i) const;

    // Operand i as held, in TFLite's layout, and (4-D) channels first.
    const TfValue& input(size_t i) const;
    graph::Expr input_tflite(size_t i) const;
    graph::Expr input_channels_first(size_t i) const;
    // The data of operand i, which must be a constant tensor ("the weights").
    runtime::NDArray constant_input(size_t i, const std::string& what) const;
    // Its integer values (int32 or int64 elements).
    std::vector<int64_t> constant_ints(size_t i, const std::string& what) const;

    // The operator's builtin options, which must be of `type` (options_type) or absent (every
    // field then reads as its default).
    const TfliteOptions& options(uint8_t type) const;

    // A CUSTOM operator's options (a FlexBuffer map); UserError when it has none or they are
    // malformed.
    TfliteCustomOptions custom_options() const {
        return TfliteCustomOptions(op_.custom_options, op_.custom_options_format, *this);
    }

    // Sets result i; `channels_first` says how a 4-D result is held.
    void set_output(size_t i, graph::Expr e, bool channels_first = false);
    const std::vector<std::optional<TfValue>>& outputs() const { return outputs_; }

    // `x` (TFLite layout) transposed with `perm`.
    graph::Expr transpose(const graph::Expr& x, const std::vector<int64_t>& perm) const;

    // The element type of TFLite tensor type `type`; UserError for one Anvil has no type for.
    DataType dtype_of(int8_t type, const std::string& what) const;
    bool is_quantized(const TfliteTensor& t) const;

private:
    const TfliteModel& model_;
    const TfliteSubgraph& graph_;
    const TfliteOperator& op_;
    const TfliteOperatorCode& code_;
    ValueSource& values_;
    bool xnnpack_rounding_;
    std::vector<std::optional<TfValue>> outputs_;
};

}  // namespace anvil::frontend::tflite
