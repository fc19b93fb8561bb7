#include "input_shapes.h"

#include <cctype>
#include <set>
#include <sstream>

#include "support/error.h"

namespace anvil::cli {

namespace {

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    }
    return true;
}

[[noreturn]] void malformed(const std::string& spec) {
    user_error() << "--input-shapes: '" << spec << "' is not NAME:[d0,d1,...] or "
                 << "NAME:[d0,d1,...]:DTYPE";
    ANVIL_UNREACHABLE();
}

InputSpec parse_spec(const std::string& spec) {
    InputSpec s;
    s.text = spec;
    size_t close = spec.rfind(']');
    if (close == std::string::npos) malformed(spec);
    if (close + 1 < spec.size()) {
        if (spec[close + 1] != ':' || close + 2 == spec.size()) malformed(spec);
        s.dtype = spec.substr(close + 2);
    }
    size_t open = spec.rfind(":[", close);
    if (open == std::string::npos || open == 0) malformed(spec);
    s.name = spec.substr(0, open);
    std::string body = spec.substr(open + 2, close - open - 2);
    if (body.find_first_of("[]") != std::string::npos) malformed(spec);
    std::istringstream ds(body);
    std::string d;
    while (std::getline(ds, d, ',')) {
        // Spaces cannot occur (they separate specs); an empty dimension ("1,,2") is a mistake.
        if (is_identifier(d)) {
            s.dims.push_back(-1);
            s.dim_names.push_back(d);
            continue;
        }
        try {
            size_t used = 0;
            int64_t v = std::stoll(d, &used);
            if (used != d.size() || v < -1) throw std::invalid_argument(d);
            s.dims.push_back(v);
            s.dim_names.emplace_back();
        } catch (const std::exception&) {
            user_error() << "--input-shapes: '" << d << "' in '" << spec
                         << "' is not a dimension (a size >= 0; for a TorchScript model also -1 "
                            "or a name for a symbolic size)";
        }
    }
    if (!body.empty() && body.back() == ',') {
        user_error() << "--input-shapes: '" << spec << "' ends its dimensions with ','";
    }
    return s;
}

}  // namespace

std::vector<InputSpec> parse_input_specs(const std::vector<std::string>& args) {
    std::vector<InputSpec> specs;
    std::set<std::string> names;
    for (const auto& arg : args) {
        std::istringstream words(arg);
        std::string spec;
        while (words >> spec) {
            specs.push_back(parse_spec(spec));
            if (!names.insert(specs.back().name).second) {
                user_error() << "--input-shapes: the input '" << specs.back().name
                             << "' is given twice";
            }
        }
    }
    return specs;
}

namespace {

void check_sizes(const InputSpec& s, const char* kind) {
    for (size_t d = 0; d < s.dims.size(); ++d) {
        if (s.dims[d] >= 0) continue;
        std::string text = s.dim_names[d].empty() ? "-1" : s.dim_names[d];
        user_error() << "--input-shapes: '" << text << "' in '" << s.text
                     << "' is not a dimension: " << kind << " model's input shapes take sizes "
                     << ">= 0 (its own shape declares the symbolic ones)";
    }
}

}  // namespace

std::map<std::string, std::vector<int64_t>> onnx_input_shapes(const std::vector<InputSpec>& specs) {
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto& s : specs) {
        check_sizes(s, "an ONNX");
        if (!s.dtype.empty()) {
            user_error() << "--input-shapes: '" << s.text << "' gives a dtype; an ONNX model "
                         << "declares its inputs' element types";
        }
        shapes[s.name] = s.dims;
    }
    return shapes;
}

frontend::TfliteImportOptions tflite_import_options(const std::vector<InputSpec>& specs) {
    frontend::TfliteImportOptions options;
    for (const auto& s : specs) {
        check_sizes(s, "a TFLite");
        options.input_shapes[s.name] = s.dims;
        DataType dtype;
        if (s.dtype.empty()) continue;
        if (!DataType::parse(s.dtype, &dtype)) {
            user_error() << "--input-shapes: '" << s.dtype << "' in '" << s.text
                         << "' is not a dtype (float32, int8, uint8, ...)";
        }
        options.input_dtypes[s.name] = dtype;
    }
    return options;
}

}  // namespace anvil::cli
