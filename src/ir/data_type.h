// Scalar and vector element types shared by every IR level.
//
// A DataType is a type code, a bit width and a lane count (lanes > 1 is a SIMD vector of that
// many elements). `handle` is an opaque pointer (a buffer's data). Codes follow DLPack's
// DLDataTypeCode so that runtime tensors and IR types convert without tables.
#pragma once

#include <cstdint>
#include <string>

namespace anvil {

class DataType {
public:
    // String (ONNX STRING) has no DLPack code; its tensors hold AnvilStrings (anvil/runtime.h)
    // and only executor ops take them: no kernel, TIR expression or codegen sees one.
    enum class Code : uint8_t {
        Int = 0,
        UInt = 1,
        Float = 2,
        Handle = 3,
        BFloat = 4,
        Bool = 5,
        String = 128,
    };

    constexpr DataType() = default;
    constexpr DataType(Code code, int bits, int lanes = 1)
        : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

    static constexpr DataType int_(int bits, int lanes = 1) { return {Code::Int, bits, lanes}; }
    static constexpr DataType uint(int bits, int lanes = 1) { return {Code::UInt, bits, lanes}; }
    static constexpr DataType float_(int bits, int lanes = 1) { return {Code::Float, bits, lanes}; }
    static constexpr DataType bool_(int lanes = 1) { return {Code::Bool, 1, lanes}; }
    static constexpr DataType int32() { return int_(32); }
    static constexpr DataType int64() { return int_(64); }
    static constexpr DataType float32() { return float_(32); }
    static constexpr DataType float64() { return float_(64); }
    static constexpr DataType float16() { return float_(16); }
    static constexpr DataType bfloat16() { return {Code::BFloat, 16}; }
    static constexpr DataType handle() { return {Code::Handle, 64}; }
    static constexpr DataType string() { return {Code::String, 128}; }
    static constexpr DataType void_() { return {Code::Handle, 0}; }

    constexpr Code code() const { return code_; }
    constexpr int bits() const { return bits_; }
    constexpr int lanes() const { return lanes_; }
    constexpr int bytes() const { return (bits_ + 7) / 8; }

    constexpr bool is_int() const { return code_ == Code::Int; }
    constexpr bool is_uint() const { return code_ == Code::UInt; }
    // Signed or unsigned integer, bool excluded.
    constexpr bool is_integer() const { return is_int() || is_uint(); }
    constexpr bool is_float() const { return code_ == Code::Float; }
    constexpr bool is_bfloat() const { return code_ == Code::BFloat; }
    // IEEE float or bfloat16: anything computed with floating-point arithmetic.
    constexpr bool is_floating() const { return is_float() || is_bfloat(); }
    constexpr bool is_bool() const { return code_ == Code::Bool; }
    constexpr bool is_string() const { return code_ == Code::String; }
    constexpr bool is_handle() const { return code_ == Code::Handle && bits_ != 0; }
    constexpr bool is_void() const { return code_ == Code::Handle && bits_ == 0; }
    constexpr bool is_scalar() const { return lanes_ == 1; }
    constexpr bool is_vector() const { return lanes_ > 1; }

    constexpr DataType element_of() const { return {code_, bits_, 1}; }
    constexpr DataType with_lanes(int lanes) const { return {code_, bits_, lanes}; }

    constexpr bool operator==(const DataType&) const = default;

    // "float32", "int64x8", "bool", "handle", "void", "string"
    std::string str() const;
    // Inverse of str(); returns false on an unknown spelling.
    static bool parse(const std::string& text, DataType* out);

private:
    Code code_ = Code::Int;
    uint8_t bits_ = 32;
    uint16_t lanes_ = 1;
};

}  // namespace anvil
