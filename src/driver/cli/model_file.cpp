#include "model_file.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "frontend/onnx/from_onnx.h"
#include "frontend/tflite/from_tflite.h"
#include "graph/parser.h"
#include "graph/passes/passes.h"
#include "input_shapes.h"
#include "ops/op_table.h"
#include "runtime/npz.h"
#include "support/error.h"
#include "torchscript_model.h"

namespace anvil::cli {

namespace {

// Whether `message` starts with the parser's "LINE:COL: ".
bool starts_with_position(const std::string& message) {
    size_t i = 0;
    for (int part = 0; part < 2; ++part) {
        size_t digits = i;
        while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) ++i;
        if (i == digits || i >= message.size() || message[i] != ':') return false;
        ++i;
    }
    return true;
}

}  // namespace

bool is_module_text(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    return ext == ".anvil" || ext == ".txt";
}

bool is_tflite(const std::string& path) {
    if (std::filesystem::path(path).extension() == ".tflite") return true;
    std::ifstream in(path, std::ios::binary);
    char head[8] = {};
    return in.read(head, 8) && std::string(head + 4, 4) == "TFL3";
}

graph::IRModule read_module_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) user_error() << path << ": cannot open the file";
    std::stringstream text;
    text << in.rdbuf();
    try {
        return graph::parse_module(text.str(), ops::op_table());
    } catch (const UserError& e) {
        std::string message = e.what();
        user_error() << path << (starts_with_position(message) ? ":" : ": ") << message;
    }
    ANVIL_UNREACHABLE();
}

graph::IRModule bind_params_npz(const graph::IRModule& m, const std::string& path) {
    std::map<std::string, runtime::NDArray> values;
    for (auto& [name, array] : runtime::read_npz(path)) values[name] = array;
    try {
        return graph::bind_params(m, "main", values);
    } catch (const UserError& e) {
        user_error() << "--params " << path << ": " << e.what();
    }
    ANVIL_UNREACHABLE();
}

graph::IRModule load_model(const std::string& path, const std::vector<std::string>& input_shapes,
                           const std::string& params, const std::string& tflite_rounding) {
    graph::IRModule m;
    if (!tflite_rounding.empty() &&
        (is_module_text(path) || is_torchscript(path) || !is_tflite(path))) {
        user_error() << "--tflite-rounding applies to TFLite models; " << path << " is not one";
    }
    if (is_module_text(path)) {
        if (!input_shapes.empty()) {
            user_error()
                << "--input-shapes applies to ONNX, TorchScript and TFLite models; the text of "
                << path << " declares its inputs' shapes";
        }
        m = read_module_text(path);
        if (!params.empty()) m = bind_params_npz(m, params);
    } else {
        bool torchscript = is_torchscript(path);
        bool tflite = !torchscript && is_tflite(path);
        if (!params.empty()) {
            user_error() << "--params binds weights to a module's text (.anvil); the "
                         << (torchscript ? "TorchScript"
                             : tflite    ? "TFLite"
                                         : "ONNX")
                         << " model " << path << " holds its own";
        }
        std::vector<InputSpec> inputs = parse_input_specs(input_shapes);
        if (torchscript) {
            m = read_torchscript_model(path, inputs);
        } else if (tflite) {
            frontend::TfliteImportOptions options = tflite_import_options(inputs);
            if (!tflite_rounding.empty()) options.rounding = tflite_rounding;
            m = frontend::from_tflite_file(path, options);
        } else {
            frontend::ImportOptions import;
            import.input_shapes = onnx_input_shapes(inputs);
            m = frontend::from_onnx(path, import);
        }
    }
    return m;
}

}  // namespace anvil::cli
