#include "run_values.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "driver/compare.h"
#include "frontend/onnx/from_onnx.h"
#include "graph/expr.h"
#include "runtime/npz.h"
#include "support/error.h"

namespace anvil::cli {

namespace {

using runtime::NDArray;
using runtime::VMValue;

// ONNX test data stores bfloat16 as uint16 bits: every tensor of `v` relabelled as `dtype`.
VMValue as_declared(VMValue v, DLDataType dtype) {
    if (v.kind == VMValue::Kind::tensor) v.tensor = driver::as_declared(v.tensor, dtype);
    for (VMValue& f : v.fields) f = as_declared(std::move(f), dtype);
    return v;
}

graph::Type type_of(const runtime::VMInputInfo& info) {
    DataType dtype = graph::dtype_of(info.dtype);
    graph::Type t = info.sequence ? graph::make_sequence_type(dtype, std::nullopt)
                                  : graph::make_tensor_type(std::vector<int64_t>{}, dtype);
    return info.optional ? graph::make_optional_type(t) : t;
}

// The tensors NAME/0, NAME/1, ... of the .npz; UserError when their numbers leave a gap.
std::vector<VMValue> sequence_arrays(const std::map<std::string, NDArray>& arrays,
                                     const std::string& name, const std::string& source) {
    std::map<int64_t, NDArray> items;
    std::string prefix = name + "/";
    for (const auto& [key, array] : arrays) {
        if (!key.starts_with(prefix)) continue;
        std::string index = key.substr(prefix.size());
        if (index.empty() || index.size() > 9 ||
            !std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            continue;
        }
        items[std::stoll(index)] = array;
    }
    std::vector<VMValue> out;
    for (const auto& [index, array] : items) {
        if (index != static_cast<int64_t>(out.size())) {
            user_error() << "--inputs: " << source << " has " << prefix << index << " but no "
                         << prefix << out.size() << " (a sequence's tensors are numbered from 0)";
        }
        out.emplace_back(array);
    }
    return out;
}

std::vector<VMValue> read_npz_inputs(const std::string& source,
                                     const std::vector<runtime::VMInputInfo>& inputs) {
    auto ordered = runtime::read_npz(source);
    std::map<std::string, NDArray> arrays(ordered.begin(), ordered.end());
    std::vector<VMValue> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const runtime::VMInputInfo& info = inputs[i];
        auto it = arrays.find(info.name);
        if (info.sequence) {
            if (it != arrays.end()) {
                user_error() << "--inputs: input '" << info.name << "' is a sequence: give its "
                             << "tensors as " << info.name << "/0, " << info.name << "/1, ...";
            }
            std::vector<VMValue> items = sequence_arrays(arrays, info.name, source);
            if (items.empty()) {
                std::fprintf(stderr, "note: --inputs: no %s/0, %s/1, ... in %s; input '%s' is %s\n",
                             info.name.c_str(), info.name.c_str(), source.c_str(),
                             info.name.c_str(),
                             info.optional ? "an empty optional" : "an empty sequence");
                if (info.optional) {
                    values.emplace_back();
                    continue;
                }
            }
            values.push_back(as_declared(VMValue::tuple(std::move(items)), info.dtype));
        } else if (it != arrays.end()) {
            values.push_back(as_declared(it->second, info.dtype));
        } else if (info.optional) {
            std::fprintf(stderr, "note: --inputs: no array '%s' in %s; it is an empty optional\n",
                         info.name.c_str(), source.c_str());
            values.emplace_back();
        } else if (i < ordered.size()) {
            values.push_back(as_declared(ordered[i].second, info.dtype));
        } else {
            user_error() << "--inputs: " << source << " has no array for input '" << info.name
                         << "'";
        }
    }
    return values;
}

void add_arrays(const std::string& name, const VMValue& v,
                std::vector<std::pair<std::string, NDArray>>* out) {
    if (v.kind == VMValue::Kind::tensor) out->emplace_back(name, v.tensor);
    for (size_t k = 0; k < v.fields.size(); ++k) {
        add_arrays(name + "/" + std::to_string(k), v.fields[k], out);
    }
}

std::string kind_text(const VMValue& v) {
    if (v.kind == VMValue::Kind::tensor) return v.tensor.str();
    if (v.kind == VMValue::Kind::none) return "an empty optional";
    return "a sequence of " + std::to_string(v.fields.size()) + " tensor(s)";
}

// Prints one line per tensor compared; false on a mismatch.
bool compare_value(const std::string& label, const VMValue& got, const VMValue& want) {
    constexpr double rtol = 1e-3, atol = 1e-4;
    if (got.kind != want.kind ||
        (got.kind == VMValue::Kind::tuple && got.fields.size() != want.fields.size())) {
        std::printf("%s: got %s, expected %s: MISMATCH\n", label.c_str(), kind_text(got).c_str(),
                    kind_text(want).c_str());
        return false;
    }
    if (got.kind == VMValue::Kind::none) {
        std::printf("%s: an empty optional: ok\n", label.c_str());
        return true;
    }
    if (got.kind == VMValue::Kind::tuple) {
        bool ok = true;
        if (got.fields.empty()) std::printf("%s: an empty sequence: ok\n", label.c_str());
        for (size_t i = 0; i < got.fields.size(); ++i) {
            ok &=
                compare_value(label + "[" + std::to_string(i) + "]", got.fields[i], want.fields[i]);
        }
        return ok;
    }
    driver::Comparison c = driver::compare_tensors(got.tensor, want.tensor, rtol, atol);
    if (!c.same_type) {
        std::printf("%s: got %s, expected %s: MISMATCH\n", label.c_str(), got.tensor.str().c_str(),
                    want.tensor.str().c_str());
        return false;
    }
    std::printf("%s: max abs error %.3g, max rel error %.3g: %s\n", label.c_str(), c.max_abs_error,
                c.max_rel_error, c.ok() ? "ok" : "MISMATCH");
    if (!c.ok()) {
        std::printf("  %zu of %zu elements differ (rtol %g, atol %g)\n", c.mismatches, c.elements,
                    rtol, atol);
    }
    return c.ok();
}

// The reference file holds what the model gave: a TensorProto for a tensor, a SequenceProto
// for a sequence, an OptionalProto for nothing.
graph::Type reference_type(const VMValue& v) {
    DataType any = DataType::float32();  // read_value_pb takes the dtype from the file
    if (v.kind == VMValue::Kind::tuple) return graph::make_sequence_type(any, std::nullopt);
    graph::Type tensor = graph::make_tensor_type(std::vector<int64_t>{}, any);
    return v.kind == VMValue::Kind::none ? graph::make_optional_type(tensor) : tensor;
}

}  // namespace

std::vector<VMValue> read_input_values(const std::string& source,
                                       const std::vector<runtime::VMInputInfo>& inputs) {
    if (!std::filesystem::is_directory(source)) return read_npz_inputs(source, inputs);
    std::vector<VMValue> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
        std::string path = source + "/input_" + std::to_string(i) + ".pb";
        if (!std::filesystem::exists(path)) {
            user_error() << "--inputs: " << path << " is missing (the model has " << inputs.size()
                         << " input(s))";
        }
        values.push_back(
            as_declared(frontend::read_value_pb(path, type_of(inputs[i])), inputs[i].dtype));
    }
    return values;
}

void write_output_values(const std::string& path, const std::vector<std::string>& names,
                         const std::vector<VMValue>& values) {
    std::vector<std::pair<std::string, NDArray>> arrays;
    for (size_t i = 0; i < values.size(); ++i) {
        add_arrays(i < names.size() ? names[i] : "output" + std::to_string(i), values[i], &arrays);
    }
    runtime::write_npz(path, arrays);
}

bool compare_output_values(const std::string& dir, const std::vector<VMValue>& values) {
    bool ok = true;
    for (size_t k = 0; k < values.size(); ++k) {
        std::string path = dir + "/output_" + std::to_string(k) + ".pb";
        if (!std::filesystem::exists(path)) user_error() << "--compare: " << path << " is missing";
        VMValue want = frontend::read_value_pb(path, reference_type(values[k]));
        ok &= compare_value("output " + std::to_string(k), values[k], want);
    }
    return ok;
}

}  // namespace anvil::cli
