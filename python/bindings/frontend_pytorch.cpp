// The PyTorch importer's binding: anvil.frontend.from_pytorch reads the TorchScript module with
// PyTorch (anvil/_torchscript.py) and hands the description and its tensors to
// frontend::from_torchscript.
#include <pybind11/stl.h>

#include "bindings.h"
#include "frontend/pytorch/from_pytorch.h"
#include "graph/type.h"

namespace anvil::python {

void init_frontend_pytorch(py::module_& m) {
    m.def(
        "from_torchscript",
        [](const std::string& description, const py::dict& tensors, const py::list& inputs,
           const std::string& origin) {
            std::map<std::string, runtime::NDArray> arrays;
            for (const auto& [name, value] : tensors) {
                runtime::NDArray view =
                    ndarray_from_numpy(py::array(py::reinterpret_borrow<py::object>(value)));
                // The module keeps its own copy: the arrays belong to the caller.
                std::vector<int64_t> shape(view.shape().begin(), view.shape().end());
                runtime::NDArray copy = runtime::NDArray::empty(shape, view.dtype());
                copy.copy_from(view.raw_data(), view.nbytes());
                arrays.emplace(name.cast<std::string>(), copy);
            }
            // inputs: (name, shape with -1 for symbolic dimensions, dtype, dimension names,
            // elements: -1 a tensor, -2 None, k >= 0 a tuple/list of the next k entries).
            std::vector<frontend::TorchInput> ins;
            for (const auto& item : inputs) {
                auto t = item.cast<py::tuple>();
                frontend::TorchInput in;
                in.name = t[0].cast<std::string>();
                in.shape = t[1].cast<std::vector<int64_t>>();
                std::string dtype = t[2].cast<std::string>();
                if (!DataType::parse(dtype, &in.dtype)) {
                    throw UserError("from_pytorch: input '" + in.name + "': unknown dtype '" +
                                    dtype + "'");
                }
                in.dim_names = t[3].cast<std::vector<std::string>>();
                in.elements = t[4].cast<int64_t>();
                ins.push_back(std::move(in));
            }
            frontend::TorchImport imported;
            {
                py::gil_scoped_release release;
                imported = frontend::from_torchscript(description, arrays, ins, origin);
            }
            py::dict params;
            for (const auto& [name, array] : imported.params) params[py::str(name)] = array;
            return py::make_tuple(imported.mod, params);
        },
        py::arg("description"), py::arg("tensors"), py::arg("inputs"),
        py::arg("origin") = "<memory>");
}

}  // namespace anvil::python
