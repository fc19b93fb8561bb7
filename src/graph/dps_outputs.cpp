#include "graph/dps_outputs.h"

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
        auto* tt = outputs[k].as<TensorType>();
        if (!tt) {
            user_error() << "a call's results are tensors, not " << type_str(outputs[k]);
        }
        out_shapes.insert(out_shapes.end(), tt->shape.begin(), tt->shape.end());
        out_ndims.push_back(static_cast<int64_t>(tt->ndim()));
        out_dtypes += (k ? "," : "") + tt->dtype.str();
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
        int64_t n = out_ndims[k];
        if (n < 0 || pos + n > out_shapes.size()) {
            user_error() << callee << ": output shapes do not match their ranks";
        }
        std::vector<PrimExpr> shape(out_shapes.begin() + pos, out_shapes.begin() + pos + n);
        pos += n;
        DataType t;
        if (!DataType::parse(dtypes[k], &t)) {
            user_error() << callee << ": unknown dtype '" << dtypes[k] << "'";
        }
        out.push_back(make_tensor_type(shape, t));
    }
    return out;
}

}  // namespace anvil::graph
