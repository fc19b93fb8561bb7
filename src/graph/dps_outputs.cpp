#include "graph/dps_outputs.h"

#include <algorithm>
#include <string_view>

#include "support/error.h"

namespace anvil::graph {

void TensorResults::set_outputs(const Type& result) {
    std::vector<Type> outputs;
    if (auto* tuple = result.as<TupleType>()) {
        outputs = tuple->fields;
    } else {
        outputs = {result};
    }
    out_shapes.clear();
    out_ndims.clear();
    out_dtypes.clear();
    for (size_t k = 0; k < outputs.size(); ++k) {
        std::string prefix;
        Type t = outputs[k];
        if (auto* opt = t.as<OptionalType>()) {
            prefix = "optional ";
            t = opt->elem;
        }
        out_dtypes += k ? "," : "";
        if (auto* tt = t.as<TensorType>()) {
            out_shapes.insert(out_shapes.end(), tt->shape.begin(), tt->shape.end());
            out_ndims.push_back(static_cast<int64_t>(tt->ndim()));
            out_dtypes += prefix + tt->dtype.str();
        } else if (auto* st = t.as<SequenceType>()) {
            if (st->dims) {
                for (int64_t d : *st->dims) out_shapes.push_back(make_int(DataType::int64(), d));
            }
            out_ndims.push_back(st->empty  ? -2
                                : st->dims ? static_cast<int64_t>(st->dims->size())
                                           : -1);
            out_dtypes += prefix + "sequence " + st->dtype.str();
        } else {
            user_error() << "a call's results are tensors, sequences or optionals, not "
                         << type_str(outputs[k]);
        }
    }
}

std::vector<Type> TensorResults::output_types(const std::string& callee) const {
    std::vector<std::string> dtypes;
    size_t start = 0;
    while (start <= out_dtypes.size()) {
        size_t comma = out_dtypes.find(',', start);
        if (comma == std::string::npos) comma = out_dtypes.size();
        dtypes.push_back(out_dtypes.substr(start, comma - start));
        start = comma + 1;
    }
    if (dtypes.size() != out_ndims.size()) {
        user_error() << callee << ": " << out_ndims.size() << " output rank(s) but "
                     << dtypes.size() << " dtype(s)";
    }
    std::vector<Type> out;
    size_t pos = 0;
    for (size_t k = 0; k < out_ndims.size(); ++k) {
        std::string_view dtype = dtypes[k];
        auto take = [&](std::string_view word) {
            if (!dtype.starts_with(word)) return false;
            dtype.remove_prefix(word.size());
            return true;
        };
        bool optional = take("optional ");
        bool sequence = take("sequence ");
        int64_t n = out_ndims[k];
        if (n < (sequence ? -2 : 0) || pos + std::max<int64_t>(n, 0) > out_shapes.size()) {
            user_error() << callee << ": output shapes do not match their ranks";
        }
        std::vector<PrimExpr> shape(out_shapes.begin() + pos,
                                    out_shapes.begin() + pos + std::max<int64_t>(n, 0));
        pos += std::max<int64_t>(n, 0);
        DataType t;
        if (!DataType::parse(std::string(dtype), &t)) {
            user_error() << callee << ": unknown dtype '" << dtypes[k] << "'";
        }
        Type result;
        if (!sequence) {
            result = make_tensor_type(shape, t);
        } else if (n == -2) {
            result = make_empty_sequence_type(t);
        } else if (n == -1) {
            result = make_sequence_type(t, std::nullopt);
        } else {
            std::vector<int64_t> dims;
            for (const auto& d : shape) {
                const int64_t* v = as_const_int(d);
                if (!v || *v < SequenceType::kAnyDim) {
                    user_error() << callee << ": a sequence's dimension is a constant, not " << d;
                }
                dims.push_back(*v);
            }
            result = make_sequence_type(t, std::move(dims));
        }
        out.push_back(optional ? make_optional_type(result) : result);
    }
    return out;
}

}  // namespace anvil::graph
