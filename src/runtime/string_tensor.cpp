#include "runtime/string_tensor.h"

#include <numeric>

#include "support/error.h"

namespace anvil::runtime {

namespace {

// Owns the strings and the AnvilString array that points into them.
struct StringStorage : Object {
    explicit StringStorage(std::vector<std::string> v) : strings(std::move(v)) {
        elements.reserve(strings.size());
        for (const std::string& s : strings) {
            elements.push_back({s.data(), static_cast<int64_t>(s.size())});
        }
    }
    std::vector<std::string> strings;
    std::vector<AnvilString> elements;
};

}  // namespace

NDArray make_string_tensor(const std::vector<int64_t>& shape, std::vector<std::string> values) {
    int64_t count = std::accumulate(shape.begin(), shape.end(), int64_t{1},
                                    [](int64_t a, int64_t b) { return a * b; });
    if (count != static_cast<int64_t>(values.size())) {
        user_error() << "a string tensor of " << count << " element(s) given " << values.size()
                     << " string(s)";
    }
    auto storage = make_ref<StringStorage>(std::move(values));
    // Nothing writes through the tensor's data: string elements are made only here.
    void* data = const_cast<AnvilString*>(storage->elements.data());
    return NDArray::wrap(data, shape, kStringDType, storage);
}

std::vector<std::string_view> string_values(const NDArray& tensor, const std::string& what) {
    if (!is_string_dtype(tensor.dtype())) {
        user_error() << what << " is " << tensor.str() << ", expected a string tensor";
    }
    const auto* elements = static_cast<const AnvilString*>(tensor.raw_data());
    std::vector<std::string_view> out;
    out.reserve(static_cast<size_t>(tensor.num_elements()));
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
        out.emplace_back(elements[i].data, static_cast<size_t>(elements[i].size));
    }
    return out;
}

}  // namespace anvil::runtime
