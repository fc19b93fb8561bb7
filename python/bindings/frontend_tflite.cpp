// The TFLite importer's binding: anvil.frontend.from_tflite hands the flatbuffer's bytes (read
// from a path, or given) to frontend::from_tflite_bytes.
#include <pybind11/stl.h>

#include "bindings.h"
#include "frontend/tflite/from_tflite.h"

namespace anvil::python {

void init_frontend_tflite(py::module_& m) {
    m.def(
        "from_tflite_bytes",
        [](const py::bytes& bytes, const std::map<std::string, std::vector<int64_t>>& shapes,
           const std::map<std::string, std::string>& dtypes, const std::string& rounding,
           const std::string& origin) {
            frontend::TfliteImportOptions options;
            options.input_shapes = shapes;
            options.rounding = rounding;
            for (const auto& [name, text] : dtypes) {
                DataType t;
                if (!DataType::parse(text, &t)) {
                    throw UserError("from_tflite: input '" + name + "': unknown dtype '" + text +
                                    "'");
                }
                options.input_dtypes[name] = t;
            }
            std::string data = bytes;
            return frontend::from_tflite_bytes(data, options, origin);
        },
        py::arg("bytes"), py::arg("shapes"), py::arg("dtypes"), py::arg("rounding"),
        py::arg("origin"));
}

}  // namespace anvil::python
