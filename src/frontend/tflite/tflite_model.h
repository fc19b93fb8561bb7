// A TensorFlow Lite model (.tflite) as plain data: what the TFLite importer reads of the
// flatbuffer.
//
// No package ships TFLite's schema, so the tables, fields and enums read here are declared in
// tflite_schema.h from the format's public description, and the file is read with the flatbuffers
// runtime's Verifier: every offset, vector, string and table is checked to lie inside the file
// before it is read. A malformed or truncated file is a UserError naming the file and what is
// wrong, never a crash or an out-of-bounds read.
//
// Tensors, operators and buffers are decoded eagerly and checked against each other (indices in
// range, buffer data as long as its tensor's shape needs). An operator's builtin options are a
// table whose layout depends on the operator, so they stay a view (TfliteOptions) that its
// converter reads by field, each read checked.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "support/source_loc.h"

namespace anvil::frontend::tflite {

// Per-tensor (one scale) or per-channel (one scale per index along `quantized_dimension`)
// affine quantization: real = scale * (q - zero_point).
struct TfliteQuantization {
    std::vector<float> scale;
    std::vector<int64_t> zero_point;
    int32_t quantized_dimension = 0;
};

struct TfliteTensor {
    std::string name;
    std::vector<int32_t> shape;
    std::vector<int32_t> shape_signature;  // -1 marks a dimension unknown at conversion time
    int8_t type = 0;                       // tflite_schema.h: TensorType
    uint32_t buffer = 0;                   // 0: no data (an activation)
    std::optional<TfliteQuantization> quantization;  // absent when the tensor has no scale
    bool is_variable = false;
};

// An operator's builtin options: a flatbuffer table read field by field. A field the file does
// not store reads as the fallback the caller gives (the schema's default); a field that lies
// outside the file is a UserError raised at `loc`.
class TfliteOptions {
public:
    TfliteOptions() = default;
    TfliteOptions(std::shared_ptr<const std::vector<uint8_t>> file, const uint8_t* table,
                  uint8_t type, SourceLoc loc)
        : file_(std::move(file)), table_(table), type_(type), loc_(std::move(loc)) {}

    // The union's type (tflite_schema.h: BuiltinOptions); 0 when the operator has none.
    uint8_t type() const { return type_; }
    bool present() const { return table_ != nullptr; }

    int32_t int32(int field, int32_t fallback = 0) const;
    int8_t int8(int field, int8_t fallback = 0) const;
    bool boolean(int field, bool fallback = false) const;
    float float32(int field, float fallback = 0.0f) const;
    std::vector<int32_t> int32_vector(int field) const;

private:
    const uint8_t* field_address(int field, size_t size) const;

    std::shared_ptr<const std::vector<uint8_t>> file_;
    const uint8_t* table_ = nullptr;
    uint8_t type_ = 0;
    SourceLoc loc_;
};

struct TfliteOperator {
    uint32_t opcode_index = 0;
    std::vector<int32_t> inputs;  // tensor indices; -1 marks an omitted optional input
    std::vector<int32_t> outputs;
    TfliteOptions options;
    // A CUSTOM operator's options, a view into the file, in the format custom_options_format
    // names (0: a FlexBuffer map; custom_options.h reads it).
    std::span<const uint8_t> custom_options;
    uint8_t custom_options_format = 0;
};

struct TfliteOperatorCode {
    int32_t builtin = 0;  // tflite_schema.h: BuiltinOperator
    std::string custom;   // the name of a CUSTOM operator
    int32_t version = 1;
};

struct TfliteSubgraph {
    std::string name;
    std::vector<TfliteTensor> tensors;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    std::vector<TfliteOperator> operators;
};

struct TfliteModel {
    std::string origin;  // the file name messages use
    uint32_t version = 0;
    std::vector<TfliteOperatorCode> operator_codes;
    std::vector<TfliteSubgraph> subgraphs;
    // Buffer i's bytes (empty when it holds none), views into `file`.
    std::vector<std::span<const uint8_t>> buffers;
    std::shared_ptr<const std::vector<uint8_t>> file;
};

// The largest .tflite file read: flatbuffers address less than 2 GiB. (A buffer kept past the
// flatbuffer, at an offset inside the file, is read.)
constexpr size_t kMaxTfliteBytes = (size_t{1} << 31) - 2;

// Decodes `bytes` (the whole file); `origin` names it in errors.
TfliteModel read_tflite_model(std::vector<uint8_t> bytes, const std::string& origin);
// Reads and decodes the file at `path`.
TfliteModel read_tflite_file(const std::string& path);

// "CONV_2D" for a builtin code; "BUILTIN_<n>" for one this importer has no name for.
std::string builtin_name(int32_t builtin);
// builtin_name, or for a CUSTOM operator its custom code ("SignalWindow").
std::string operator_name(const TfliteOperatorCode& code);
// "float32", "int8", ...: the element type's name; "tensor type <n>" for an unknown one.
std::string tensor_type_name(int8_t type);

}  // namespace anvil::frontend::tflite
