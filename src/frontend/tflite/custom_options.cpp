#include "frontend/tflite/custom_options.h"

#include <flatbuffers/flexbuffers.h>

namespace anvil::frontend::tflite {

namespace {

constexpr uint8_t kFlexbuffers = 0;  // enum CustomOptionsFormat

flexbuffers::Reference lookup(std::span<const uint8_t> bytes, const std::string& key) {
    return flexbuffers::GetRoot(bytes.data(), bytes.size()).AsMap()[key.c_str()];
}

}  // namespace

TfliteCustomOptions::TfliteCustomOptions(std::span<const uint8_t> bytes, uint8_t format,
                                         const NodeBuilder& at)
    : bytes_(bytes), at_(at) {
    if (format != kFlexbuffers) {
        at.error() << "its custom options are in format " << int(format)
                   << "; only FlexBuffers (0) are read";
    }
    if (bytes.empty()) at.error() << "it has no custom options (a FlexBuffer map of its options)";
    if (!flexbuffers::VerifyBuffer(bytes.data(), bytes.size())) {
        at.error() << "its custom options (" << bytes.size()
                   << " bytes) are not a valid FlexBuffer";
    }
    if (!flexbuffers::GetRoot(bytes.data(), bytes.size()).IsMap()) {
        at.error() << "its custom options are not a FlexBuffer map";
    }
}

int64_t TfliteCustomOptions::integer(const std::string& key, int64_t lo, int64_t hi) const {
    flexbuffers::Reference v = lookup(bytes_, key);
    if (v.IsNull()) at_.error() << "its custom options have no '" << key << "'";
    if (!v.IsIntOrUint() && !v.IsBool()) {
        at_.error() << "its custom option '" << key << "' is not an integer";
    }
    if (v.IsUInt() && v.AsUInt64() > uint64_t(hi)) {
        at_.error() << "its custom option '" << key << "' is " << v.AsUInt64() << ", outside ["
                    << lo << ", " << hi << "]";
    }
    int64_t value = v.AsInt64();
    if (value < lo || value > hi) {
        at_.error() << "its custom option '" << key << "' is " << value << ", outside [" << lo
                    << ", " << hi << "]";
    }
    return value;
}

bool TfliteCustomOptions::boolean(const std::string& key) const {
    flexbuffers::Reference v = lookup(bytes_, key);
    if (v.IsNull()) at_.error() << "its custom options have no '" << key << "'";
    if (!v.IsBool() && !v.IsIntOrUint()) {
        at_.error() << "its custom option '" << key << "' is not a boolean";
    }
    return v.AsBool();
}

}  // namespace anvil::frontend::tflite
