#include "ir/intrinsics.h"

#include <array>
#include <utility>

namespace anvil::intrin {

namespace {
constexpr std::array<std::pair<const char*, int>, 28> kTable = {{
    {kExp, 1},         {kLog, 1},    {kSqrt, 1},       {kRsqrt, 1},    {kTanh, 1},  {kSigmoid, 1},
    {kErf, 1},         {kPow, 2},    {kAbs, 1},        {kFloor, 1},    {kCeil, 1},  {kRound, 1},
    {kFma, 3},         {kSin, 1},    {kCos, 1},        {kTan, 1},      {kAsin, 1},  {kAcos, 1},
    {kAtan, 1},        {kSinh, 1},   {kCosh, 1},       {kAsinh, 1},    {kAcosh, 1}, {kAtanh, 1},
    {kReinterpret, 1}, {kLikely, 1}, {kIfThenElse, 3}, {kPrefetch, 1},
}};
constexpr std::array<std::pair<const char*, int>, 6> kBitwiseTable = {{
    {kBitwiseAnd, 2},
    {kBitwiseOr, 2},
    {kBitwiseXor, 2},
    {kBitwiseNot, 1},
    {kShiftLeft, 2},
    {kShiftRight, 2},
}};
}  // namespace

bool is_math(const std::string& name) {
    return arity(name) >= 0 && !is_integer_elementwise(name) && !is_dot(name) &&
           name != kReinterpret && name != kLikely && name != kIfThenElse && name != kPrefetch &&
           !is_amx(name);
}

bool is_amx(const std::string& name) {
    return name == kAmxTileConfig || name == kAmxTileRelease || name == kAmxTileZero ||
           name == kAmxTileLoad || name == kAmxTileStore || name == kAmxTileDotBF16 ||
           name == kAmxTileDotU8S8;
}

bool is_integer_elementwise(const std::string& name) {
    return is_bitwise(name) || name == kDotU8S8 || is_fixed_point_multiply(name);
}

bool is_fixed_point_multiply(const std::string& name) {
    return name == kFixedPointMultiplyUpward || name == kFixedPointMultiplyToNearest ||
           name == kFixedPointMultiplyTflite || name == kFixedPointMultiplyTfliteRightShift;
}

bool is_dot(const std::string& name) {
    return name == kDotU8S8 || name == kDotBF16;
}

bool is_bitwise(const std::string& name) {
    for (const auto& [n, a] : kBitwiseTable) {
        if (name == n) return true;
    }
    return false;
}

int arity(const std::string& name) {
    for (const auto& [n, a] : kTable) {
        if (name == n) return a;
    }
    for (const auto& [n, a] : kBitwiseTable) {
        if (name == n) return a;
    }
    if (is_dot(name)) return 2;
    if (is_fixed_point_multiply(name)) return 3;
    if (name == kAmxTileConfig) return 6;
    if (name == kAmxTileRelease) return 0;
    if (name == kAmxTileZero) return 1;
    if (is_amx(name)) return 3;  // load, store, the products
    return -1;
}

}  // namespace anvil::intrin
