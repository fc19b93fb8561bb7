// The interpreter's packed word operations and AMX tile calls (ir/intrinsics.h), element by
// element as documented there and in Intel's SDM (tdpbf16ps adds each product with an FMA), so
// that tensorize_amx's tile products can be checked against the loops they replace on any
// machine.
#include <bit>
#include <cmath>
#include <cstring>

#include "ir/intrinsics.h"
#include "tir_interpreter.h"

namespace anvil::tir::testing {

namespace {

[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("interpreter: " + what);
}

int64_t wrap32(int64_t v) {
    return static_cast<int32_t>(static_cast<uint32_t>(v));
}

// Element k (of `bits` bits) of a 32-bit word, zero-extended.
uint32_t part(int64_t word, int bits, int k) {
    return (static_cast<uint32_t>(word) >> (bits * k)) & ((1u << bits) - 1);
}

double bf16_value(uint32_t bits16) {
    return std::bit_cast<float>(bits16 << 16);
}

// dot_bf16's pair: both products and their sum are exact in double; one float32 rounding.
double bf16_pair(double a0, double b0, double a1, double b1) {
    return static_cast<float>(a0 * b0 + a1 * b1);
}

// An element of a buffer as the bytes memory holds: integers little-endian, float32 and
// bfloat16 as their bits.
void encode(double v, DataType t, uint8_t* out) {
    uint32_t bits = 0;
    if (t.is_bfloat()) {
        bits = std::bit_cast<uint32_t>(static_cast<float>(v)) >> 16;
    } else if (t.is_floating()) {
        bits = std::bit_cast<uint32_t>(static_cast<float>(v));
    } else {
        bits = static_cast<uint32_t>(static_cast<int64_t>(v));
    }
    std::memcpy(out, &bits, static_cast<size_t>(t.bytes()));
}

double decode(const uint8_t* in, DataType t) {
    if (t != DataType::float32() && t != DataType::int32()) fail("tile store to " + t.str());
    uint32_t bits = 0;
    std::memcpy(&bits, in, 4);
    return t.is_floating() ? static_cast<double>(std::bit_cast<float>(bits))
                           : static_cast<double>(static_cast<int32_t>(bits));
}

}  // namespace

Value Interpreter::eval_packed(const Call* op, const std::vector<Value>& args) {
    DataType t = op->dtype;
    Value out{t, {}, {}};
    const int lanes = t.lanes();
    if (t.is_floating()) {
        out.f.resize(static_cast<size_t>(lanes));
    } else {
        out.i.resize(static_cast<size_t>(lanes));
    }
    for (int l = 0; l < lanes; ++l) {
        const int64_t a = args.at(0).as_int(l);
        const int64_t b = args.size() > 1 ? args[1].as_int(l) : 0;
        const std::string& n = op->name;
        if (n == intrin::kDotU8S8) {
            int64_t sum = 0;
            for (int k = 0; k < 4; ++k) {
                sum += static_cast<int64_t>(part(a, 8, k)) *
                       static_cast<int8_t>(static_cast<uint8_t>(part(b, 8, k)));
            }
            out.i[l] = wrap32(sum);
        } else if (n == intrin::kDotBF16) {
            out.f[l] = bf16_pair(bf16_value(part(a, 16, 0)), bf16_value(part(b, 16, 0)),
                                 bf16_value(part(a, 16, 1)), bf16_value(part(b, 16, 1)));
        } else {
            const int bits = t.bits();
            const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
            uint64_t r = 0;
            if (n == intrin::kBitwiseAnd) {
                r = static_cast<uint64_t>(a & b);
            } else if (n == intrin::kBitwiseOr) {
                r = static_cast<uint64_t>(a | b);
            } else if (n == intrin::kBitwiseXor) {
                r = static_cast<uint64_t>(a ^ b);
            } else if (n == intrin::kBitwiseNot) {
                r = ~static_cast<uint64_t>(a);
            } else if (n == intrin::kShiftLeft || n == intrin::kShiftRight) {
                if (b < 0 || b >= bits) fail(n + " by " + std::to_string(b));
                // Right shifts are arithmetic on signed types (the value is held sign-extended).
                r = n == intrin::kShiftLeft ? static_cast<uint64_t>(a) << b
                    : t.is_int()            ? static_cast<uint64_t>(a >> b)
                                            : static_cast<uint64_t>(a) >> b;
            } else {
                fail("packed call " + n);
            }
            r &= mask;
            // Back to the type's signedness.
            const bool negative = t.is_int() && bits < 64 && (r >> (bits - 1)) != 0;
            out.i[l] = negative ? static_cast<int64_t>(r | ~mask) : static_cast<int64_t>(r);
        }
    }
    return out;
}

int64_t Interpreter::tile_base(const Call* op, size_t i, std::vector<double>** data) {
    auto* load = op->args.at(i).as<Load>();
    if (!load || load->indices.size() != 1) fail(op->name + ": address is not a flat load");
    auto it = buffers_.find(load->buffer.get());
    if (it == buffers_.end()) fail("unbound buffer " + load->buffer->name);
    *data = it->second;
    return eval(load->indices[0]).as_int(0);
}

void Interpreter::exec_amx(const Call* op) {
    auto constant = [&](size_t i) {
        const int64_t* v = as_const_int(op->args.at(i));
        if (!v) fail(op->name + ": argument " + std::to_string(i) + " is not a constant");
        return *v;
    };
    auto tile = [&](size_t i) -> Tile& {
        const int64_t t = constant(i);
        if (t < 0 || t >= 8) fail(op->name + ": no tile " + std::to_string(t));
        Tile& tl = tiles_[static_cast<size_t>(t)];
        if (tl.rows == 0) fail(op->name + ": tile " + std::to_string(t) + " not configured");
        return tl;
    };
    const std::string& n = op->name;
    if (n == intrin::kAmxTileRelease) {
        tiles_.assign(8, Tile{});
    } else if (n == intrin::kAmxTileConfig) {
        tiles_.assign(8, Tile{});
        for (size_t t = 0; t < 3; ++t) {
            Tile& tl = tiles_[t];
            tl.rows = constant(2 * t);
            tl.bytes = constant(2 * t + 1);
            if (tl.rows < 1 || tl.rows > 16 || tl.bytes < 4 || tl.bytes > 64 || tl.bytes % 4) {
                fail("amx_tile_config: bad tile shape");
            }
            tl.data.assign(static_cast<size_t>(tl.rows * tl.bytes), 0);
        }
    } else if (n == intrin::kAmxTileZero) {
        Tile& tl = tile(0);
        std::fill(tl.data.begin(), tl.data.end(), 0);
    } else if (n == intrin::kAmxTileLoad || n == intrin::kAmxTileStore) {
        Tile& tl = tile(0);
        std::vector<double>* data = nullptr;
        const int64_t base = tile_base(op, 1, &data);
        const DataType t = op->args[1].dtype();
        const int64_t size = t.bytes();
        const int64_t stride = eval(op->args.at(2)).as_int(0);
        if (stride % size || tl.bytes % size) fail(n + ": stride or row not in whole elements");
        for (int64_t r = 0; r < tl.rows; ++r) {
            for (int64_t e = 0; e < tl.bytes / size; ++e) {
                const int64_t at = base + r * (stride / size) + e;
                if (at < 0 || at >= static_cast<int64_t>(data->size())) {
                    fail(n + ": element " + std::to_string(at) + " outside the buffer");
                }
                uint8_t* bytes = &tl.data[static_cast<size_t>(r * tl.bytes + e * size)];
                if (n == intrin::kAmxTileLoad) {
                    encode((*data)[static_cast<size_t>(at)], t, bytes);
                } else {
                    (*data)[static_cast<size_t>(at)] = decode(bytes, t);
                }
            }
        }
    } else {
        // c (M x N words) += a (M x K words) x b (K x N words), word by word in k order.
        Tile &c = tile(0), &a = tile(1), &b = tile(2);
        const int64_t m_rows = c.rows, n_cols = c.bytes / 4, k_words = a.bytes / 4;
        if (a.rows != m_rows || b.rows != k_words || b.bytes != c.bytes) {
            fail(n + ": tile shapes do not match");
        }
        auto word = [](const Tile& t, int64_t r, int64_t w) {
            uint32_t v = 0;
            std::memcpy(&v, &t.data[static_cast<size_t>(r * t.bytes + 4 * w)], 4);
            return static_cast<int64_t>(v);
        };
        const bool bf16 = n == intrin::kAmxTileDotBF16;
        for (int64_t m = 0; m < m_rows; ++m) {
            for (int64_t col = 0; col < n_cols; ++col) {
                uint8_t* cell = &c.data[static_cast<size_t>(m * c.bytes + 4 * col)];
                double acc = decode(cell, bf16 ? DataType::float32() : DataType::int32());
                for (int64_t k = 0; k < k_words; ++k) {
                    const int64_t x = word(a, m, k), w = word(b, k, col);
                    if (bf16) {
                        // Each product added with one rounding (the test data has no
                        // subnormals, which tdpbf16ps flushes).
                        for (int j = 0; j < 2; ++j) {
                            acc = std::fma(static_cast<float>(bf16_value(part(x, 16, j))),
                                           static_cast<float>(bf16_value(part(w, 16, j))),
                                           static_cast<float>(acc));
                        }
                    } else {
                        int64_t sum = 0;
                        for (int j = 0; j < 4; ++j) {
                            sum += static_cast<int64_t>(part(x, 8, j)) *
                                   static_cast<int8_t>(static_cast<uint8_t>(part(w, 8, j)));
                        }
                        acc = static_cast<double>(wrap32(static_cast<int64_t>(acc) + sum));
                    }
                }
                encode(acc, bf16 ? DataType::float32() : DataType::int32(), cell);
            }
        }
    }
}

}  // namespace anvil::tir::testing
