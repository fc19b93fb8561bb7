#include "runtime/vm_sequence.h"

#include <algorithm>
#include <cstring>

#include "runtime/string_tensor.h"
#include "support/error.h"

namespace anvil::runtime {

namespace {

std::string where(const std::string& node) {
    return "vm: node '" + node + "': ";
}

// A position operand: a one-element integer tensor, in [-n, limit) and made non-negative.
int64_t position(const VMValue& pos, int64_t n, int64_t limit, const std::string& node) {
    if (pos.kind != VMValue::Kind::tensor || pos.tensor.num_elements() != 1 ||
        pos.tensor.dtype().code != kDLInt) {
        user_error() << where(node) << "a sequence position must be a one-element integer tensor";
    }
    int64_t p = element_as_int64(pos.tensor);
    if (p < -n || p >= limit) {
        user_error() << where(node) << "position " << p << " is out of range for a sequence of "
                     << n << " tensor(s) (valid: " << -n << " to " << limit - 1 << ")";
    }
    return p < 0 ? p + n : p;
}

const NDArray& tensor_of(const VMValue& v, const std::string& node, const std::string& what) {
    if (v.kind != VMValue::Kind::tensor) user_error() << where(node) << what << " is not a tensor";
    return v.tensor;
}

// concat_tensors of string tensors (whose elements point into their owners' storage): the
// strings are copied in the order the bytes of numbers would be.
NDArray concat_strings(const std::vector<NDArray>& items, int64_t outer,
                       const std::vector<int64_t>& out_shape) {
    std::vector<std::vector<std::string_view>> values;
    for (const NDArray& t : items) values.push_back(string_values(t, "a joined tensor"));
    std::vector<std::string> out;
    for (int64_t o = 0; o < outer; ++o) {
        for (const auto& v : values) {
            size_t block = v.size() / static_cast<size_t>(outer);
            for (size_t k = 0; k < block; ++k) out.emplace_back(v[o * block + k]);
        }
    }
    return make_string_tensor(out_shape, std::move(out));
}

}  // namespace

const std::vector<VMValue>& sequence_items(const VMValue& v, const std::string& node) {
    if (v.kind != VMValue::Kind::tuple) {
        user_error() << where(node) << "expected a sequence, got "
                     << (v.kind == VMValue::Kind::none ? "nothing" : v.tensor.str());
    }
    return v.fields;
}

NDArray sequence_length(const VMValue& seq, const std::string& node) {
    NDArray t = NDArray::empty({}, {kDLInt, 64, 1});
    *static_cast<int64_t*>(t.raw_data()) = static_cast<int64_t>(sequence_items(seq, node).size());
    return t;
}

VMValue sequence_at(const VMValue& seq, const VMValue& pos, const std::string& node) {
    const auto& items = sequence_items(seq, node);
    auto n = static_cast<int64_t>(items.size());
    return items[static_cast<size_t>(position(pos, n, n, node))];
}

VMValue sequence_insert(const VMValue& seq, const VMValue& tensor, const VMValue* pos,
                        const std::string& node) {
    std::vector<VMValue> items = sequence_items(seq, node);
    auto n = static_cast<int64_t>(items.size());
    int64_t at = pos ? position(*pos, n, n + 1, node) : n;
    tensor_of(tensor, node, "the inserted value");
    if (!items.empty() && !dl_dtype_equal(items[0].tensor.dtype(), tensor.tensor.dtype())) {
        user_error() << where(node) << "cannot insert a " << tensor.tensor.str()
                     << " into a sequence of " << dl_dtype_to_string(items[0].tensor.dtype());
    }
    items.insert(items.begin() + at, tensor);
    return VMValue::tuple(std::move(items));
}

VMValue sequence_erase(const VMValue& seq, const VMValue* pos, const std::string& node) {
    std::vector<VMValue> items = sequence_items(seq, node);
    auto n = static_cast<int64_t>(items.size());
    if (n == 0) user_error() << where(node) << "cannot erase from an empty sequence";
    int64_t at = pos ? position(*pos, n, n, node) : n - 1;
    items.erase(items.begin() + at);
    return VMValue::tuple(std::move(items));
}

NDArray concat_tensors(const std::vector<NDArray>& items, int64_t axis, bool new_axis,
                       const MemoryPool& pool, const std::string& node, const std::string& what) {
    if (items.empty()) user_error() << where(node) << "cannot join an empty sequence";
    const NDArray& first = items[0];
    auto rank = static_cast<int64_t>(first.ndim());
    if (!new_axis && rank == 0) user_error() << where(node) << "cannot concatenate scalars";
    int64_t out_rank = rank + (new_axis ? 1 : 0);
    if (axis < -out_rank || axis >= out_rank) {
        user_error() << where(node) << "axis " << axis << " is out of range for rank " << out_rank;
    }
    if (axis < 0) axis += out_rank;
    // Each item is `outer` blocks of `block` elements; the output interleaves them.
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= first.shape()[d];
    std::vector<int64_t> out_shape(first.shape().begin(), first.shape().end());
    if (new_axis) {
        out_shape.insert(out_shape.begin() + axis, static_cast<int64_t>(items.size()));
    } else {
        out_shape[axis] = 0;
    }
    for (size_t i = 0; i < items.size(); ++i) {
        const NDArray& t = items[i];
        bool fits = dl_dtype_equal(t.dtype(), first.dtype()) && t.ndim() == first.ndim();
        for (int64_t d = 0; fits && d < rank; ++d) {
            fits = t.shape()[d] == first.shape()[d] || (!new_axis && d == axis);
        }
        if (!fits) {
            user_error() << where(node) << what << " " << i << " is " << t.str() << ", " << what
                         << " 0 is " << first.str() << "; they must agree in dtype and in every "
                         << (new_axis ? "dimension" : "dimension but the axis");
        }
        if (!new_axis) out_shape[axis] += t.shape()[axis];
    }
    if (is_string_dtype(first.dtype())) return concat_strings(items, outer, out_shape);
    NDArray out = pool.alloc(out_shape, first.dtype());
    auto elem = static_cast<size_t>(dl_dtype_bytes(first.dtype()));
    auto* dst = static_cast<uint8_t*>(out.raw_data());
    for (int64_t o = 0; o < outer; ++o) {
        for (const NDArray& t : items) {
            size_t block = outer ? static_cast<size_t>(t.num_elements() / outer) * elem : 0;
            const auto* src = static_cast<const uint8_t*>(t.raw_data()) + t.tensor()->byte_offset;
            if (block) std::memcpy(dst, src + o * block, block);
            dst += block;
        }
    }
    return out;
}

namespace {

// The parts' sizes along an axis of size `dim` (split_to_sequence).
std::vector<int64_t> split_sizes(int64_t dim, const VMValue* split, const NDArray& x, int64_t axis,
                                 const std::string& node) {
    if (!split) return std::vector<int64_t>(static_cast<size_t>(dim), 1);
    const NDArray& s = tensor_of(*split, node, "the split");
    if (s.dtype().code != kDLInt && s.dtype().code != kDLUInt) {
        user_error() << where(node) << "the split must hold integers, not " << s.str();
    }
    std::vector<int64_t> sizes;
    if (s.ndim() == 0) {
        int64_t size = element_as_int64(s);
        if (size <= 0)
            user_error() << where(node) << "the split size must be positive, not " << size;
        for (int64_t at = 0; at < dim; at += size) sizes.push_back(std::min(size, dim - at));
        return sizes;
    }
    if (s.ndim() != 1) {
        user_error() << where(node) << "the split must be a scalar or 1-D, not " << s.str();
    }
    int64_t total = 0;
    std::string text;
    for (int64_t i = 0; i < s.num_elements(); ++i) {
        int64_t v = element_as_int64(s, static_cast<size_t>(i));
        if (v < 0) user_error() << where(node) << "split size " << v << " is negative";
        sizes.push_back(v);
        total += v;
        text += (i ? ", " : "") + std::to_string(v);
    }
    if (total != dim) {
        user_error() << where(node) << "the split sizes [" << text << "] add up to " << total
                     << "; they do not fit axis " << axis << " of " << x.str();
    }
    return sizes;
}

}  // namespace

VMValue split_to_sequence(const NDArray& x, const VMValue* split, int64_t axis, bool squeeze,
                          const MemoryPool& pool, const std::string& node) {
    auto rank = static_cast<int64_t>(x.ndim());
    if (axis < 0 || axis >= rank) {
        user_error() << where(node) << "axis " << axis << " is out of range for " << x.str();
    }
    int64_t dim = x.shape()[axis];
    std::vector<int64_t> sizes = split_sizes(dim, split, x, axis, node);
    // x is `outer` blocks of `dim` rows of `inner` elements; a part takes rows of each block.
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape()[d];
    bool strings = is_string_dtype(x.dtype());
    std::vector<std::string_view> text;
    if (strings) text = string_values(x, "the split tensor");
    auto elem = strings ? 0 : static_cast<size_t>(dl_dtype_bytes(x.dtype()));
    const auto* src = static_cast<const uint8_t*>(x.raw_data()) + x.tensor()->byte_offset;
    std::vector<VMValue> parts;
    int64_t start = 0;
    for (int64_t len : sizes) {
        std::vector<int64_t> shape(x.shape().begin(), x.shape().end());
        shape[axis] = len;
        if (squeeze) shape.erase(shape.begin() + axis);
        if (strings) {
            std::vector<std::string> values;
            for (int64_t o = 0; o < outer; ++o) {
                for (int64_t k = (o * dim + start) * inner; k < (o * dim + start + len) * inner;
                     ++k) {
                    values.emplace_back(text[static_cast<size_t>(k)]);
                }
            }
            parts.emplace_back(make_string_tensor(shape, std::move(values)));
        } else {
            NDArray part = pool.alloc(shape, x.dtype());
            size_t block = static_cast<size_t>(len * inner) * elem;
            auto* dst = static_cast<uint8_t*>(part.raw_data());
            for (int64_t o = 0; o < outer && block; ++o) {
                std::memcpy(dst + o * block,
                            src + static_cast<size_t>((o * dim + start) * inner) * elem, block);
            }
            parts.emplace_back(std::move(part));
        }
        start += len;
    }
    return VMValue::tuple(std::move(parts));
}

NDArray concat_sequence(const VMValue& seq, int64_t axis, bool new_axis, const MemoryPool& pool,
                        const std::string& node) {
    std::vector<NDArray> items;
    for (const VMValue& v : sequence_items(seq, node)) {
        items.push_back(tensor_of(v, node, "a sequence element"));
    }
    return concat_tensors(items, axis, new_axis, pool, node, "element");
}

}  // namespace anvil::runtime
