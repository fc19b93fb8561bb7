// A CUSTOM operator's options (internal to frontend/tflite): a FlexBuffer map from option names
// to values, the format TFLite's custom_options_format FLEXBUFFERS names and TFLite Micro's
// custom kernels read.
//
// The whole buffer is checked with the flexbuffers runtime's Verifier before anything is read,
// so a malformed map is a UserError naming the operator, never an out-of-bounds read.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "frontend/node_builder.h"

namespace anvil::frontend::tflite {

class TfliteCustomOptions {
public:
    // UserError at `at` unless `bytes` (in `format`) is a valid FlexBuffer whose root is a map.
    TfliteCustomOptions(std::span<const uint8_t> bytes, uint8_t format, const NodeBuilder& at);

    // The integer (signed, unsigned or boolean) under `key`; UserError when it is missing, of
    // another kind, or outside [lo, hi].
    int64_t integer(const std::string& key, int64_t lo, int64_t hi) const;
    // The boolean (or integer: nonzero is true) under `key`; UserError when missing.
    bool boolean(const std::string& key) const;

private:
    std::span<const uint8_t> bytes_;
    const NodeBuilder& at_;
};

}  // namespace anvil::frontend::tflite
