// Runtime bindings: NDArray (NumPy and DLPack interop), PackedFunc, modules, the graph executor,
// the VM and the global function registry.
#include <dlpack/dlpack.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "bindings.h"
#include "codegen/llvm/llvm_module.h"
#include "runtime/graph_executor.h"
#include "runtime/module.h"
#include "runtime/registry.h"
#include "runtime/string_tensor.h"
#include "runtime/vm.h"

namespace anvil::python {

using runtime::NDArray;
using runtime::PackedFunc;

namespace {

// Keeps a Python object alive from C++ (the owner of memory an NDArray views). Its last reference
// may drop on any thread, so it takes the GIL to release the object.
struct PyOwner : Object {
    explicit PyOwner(py::object o) : obj(std::move(o)) {}
    ~PyOwner() override {
        if (!Py_IsInitialized()) {
            obj.release();  // the interpreter is gone; nothing left to free
            return;
        }
        py::gil_scoped_acquire gil;
        obj = py::object();
    }
    py::object obj;
};

// Owner of memory handed over through DLPack: calls the producer's deleter.
struct DLManagedOwner : Object {
    explicit DLManagedOwner(DLManagedTensor* t) : tensor(t) {}
    ~DLManagedOwner() override {
        if (tensor && tensor->deleter) tensor->deleter(tensor);
    }
    DLManagedTensor* tensor;
};

DLDataType dtype_from_numpy(const py::dtype& dt) {
    if (dt.kind() == 'b') return DLDataType{kDLUInt, 1, 1};
    return runtime::dl_dtype_from_string(dt.attr("name").cast<std::string>());
}

py::dtype dtype_to_numpy(DLDataType t) {
    if (t.code == kDLUInt && t.bits == 1) return py::dtype("bool");
    if (t.lanes != 1 || t.code == kDLBfloat || runtime::is_string_dtype(t))
        throw UserError("NDArray of dtype " + runtime::dl_dtype_to_string(t) +
                        " has no NumPy equivalent");
    return py::dtype(runtime::dl_dtype_to_string(t));
}

// NumPy unicode ('<U') and object arrays of str are string tensors, copied into UTF-8.
bool holds_strings(const py::array& array) {
    char kind = array.dtype().kind();
    return kind == 'U' || kind == 'O';
}

NDArray strings_from_numpy(const py::array& array) {
    std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    std::vector<std::string> values;
    for (py::handle item : array.attr("ravel")()) {
        if (!py::isinstance<py::str>(item)) {
            throw UserError("a string tensor takes str elements, not " +
                            py::str(py::type::of(item).attr("__name__")).cast<std::string>());
        }
        values.push_back(item.cast<std::string>());
    }
    return runtime::make_string_tensor(shape, std::move(values));
}

py::array strings_to_numpy(const NDArray& a) {
    py::list items;
    for (std::string_view s : runtime::string_values(a, "the tensor")) {
        items.append(py::str(s.data(), s.size()));
    }
    std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
    py::module_ np = py::module_::import("numpy");
    return np.attr("array")(items, py::arg("dtype") = "str").attr("reshape")(shape);
}

bool is_aligned(const void* p) {
    return reinterpret_cast<uintptr_t>(p) % ANVIL_TENSOR_ALIGNMENT == 0;
}

// A Python value for one argument of a packed call made from C++.
py::object arg_to_python(const runtime::ArgValue& a) {
    switch (a.type_code()) {
        case kAnvilInt:
            return py::int_(a.as_int());
        case kAnvilFloat:
            return py::float_(a.as_float());
        case kAnvilStr:
            return py::str(a.as_string());
        case kAnvilNull:
            return py::none();
        case kAnvilHandle:
            return py::int_(reinterpret_cast<uintptr_t>(a.as_handle()));
        case kAnvilFunction:
            return py::cast(a.as_func());
        case kAnvilDLTensor: {
            // Borrowed for the duration of the call: the view does not own the data.
            DLTensor* t = a.as_tensor();
            std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
            return py::cast(NDArray::wrap(static_cast<char*>(t->data) + t->byte_offset,
                                          std::move(shape), t->dtype, nullptr));
        }
        default:
            throw UserError(std::string("a Python function cannot take an argument of type ") +
                            runtime::type_code_name(a.type_code()));
    }
}

// Tensors a Python function returned stay alive until the thread's next return.
thread_local NDArray returned_tensor;

void python_to_ret(const py::object& value, runtime::RetValue* ret) {
    if (value.is_none()) {
        ret->set_null();
    } else if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) {
        ret->set_int(value.cast<int64_t>());
    } else if (py::isinstance<py::float_>(value)) {
        ret->set_float(value.cast<double>());
    } else if (py::isinstance<py::str>(value)) {
        ret->set_string(value.cast<std::string>());
    } else if (py::isinstance<NDArray>(value)) {
        returned_tensor = value.cast<NDArray>();
        ret->set_tensor(returned_tensor.tensor());
    } else if (py::isinstance<py::array>(value)) {
        returned_tensor = ndarray_from_numpy(value.cast<py::array>());
        ret->set_tensor(returned_tensor.tensor());
    } else if (py::isinstance<PackedFunc>(value)) {
        ret->set_func(value.cast<PackedFunc>());
    } else if (py::isinstance<py::function>(value)) {
        ret->set_func(packed_from_callable(value.cast<py::function>()));
    } else {
        throw UserError("a Python function returned a value of type " +
                        py::str(value.get_type().attr("__name__")).cast<std::string>() +
                        ", which a packed call cannot return");
    }
}

py::object ret_to_python(const runtime::RetValue& r) {
    switch (r.type_code()) {
        case kAnvilNull:
            return py::none();
        case kAnvilInt:
            return py::int_(r.as_int());
        case kAnvilFloat:
            return py::float_(r.as_float());
        case kAnvilStr:
            return py::str(r.as_string());
        case kAnvilHandle:
            return py::int_(reinterpret_cast<uintptr_t>(r.as_handle()));
        case kAnvilFunction:
            return py::cast(r.as_func());
        case kAnvilDLTensor: {
            // Returned tensors are borrowed: copy them into a tensor Python owns.
            DLTensor* t = r.as_tensor();
            std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
            NDArray out = NDArray::empty(shape, t->dtype);
            out.copy_from(static_cast<char*>(t->data) + t->byte_offset, out.nbytes());
            return py::cast(out);
        }
        default:
            throw UserError("cannot convert a returned value to Python");
    }
}

// Calls `f` with Python arguments. NumPy arguments are passed without a copy when aligned; a
// copied one is written back after the call, so outputs work either way. The GIL is released
// during the call (kernels run on the thread pool; Python callbacks take it back).
py::object call_packed(const PackedFunc& f, const py::args& args) {
    size_t n = args.size();
    std::vector<AnvilValue> values(n == 0 ? 1 : n);
    std::vector<int> codes(n == 0 ? 1 : n);
    std::vector<NDArray> tensors;
    std::vector<std::string> strings;
    std::vector<PackedFunc> funcs;
    std::vector<std::pair<py::array, NDArray>> write_back;
    tensors.reserve(n);
    strings.reserve(n);
    funcs.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        py::handle a = args[i];
        if (a.is_none()) {
            values[i].v_handle = nullptr;
            codes[i] = kAnvilNull;
        } else if (py::isinstance<NDArray>(a)) {
            tensors.push_back(a.cast<NDArray>());
            values[i].v_handle = tensors.back().tensor();
            codes[i] = kAnvilDLTensor;
        } else if (py::isinstance<py::array>(a)) {
            auto array = py::reinterpret_borrow<py::array>(a);
            bool copied = false;
            tensors.push_back(ndarray_from_numpy(array, &copied));
            if (copied && array.writeable()) write_back.emplace_back(array, tensors.back());
            values[i].v_handle = tensors.back().tensor();
            codes[i] = kAnvilDLTensor;
        } else if (py::isinstance<py::bool_>(a) || py::isinstance<py::int_>(a)) {
            values[i].v_int64 = a.cast<int64_t>();
            codes[i] = kAnvilInt;
        } else if (py::isinstance<py::float_>(a)) {
            values[i].v_float64 = a.cast<double>();
            codes[i] = kAnvilFloat;
        } else if (py::isinstance<py::str>(a)) {
            strings.push_back(a.cast<std::string>());
            values[i].v_str = strings.back().c_str();
            codes[i] = kAnvilStr;
        } else if (py::isinstance<PackedFunc>(a)) {
            funcs.push_back(a.cast<PackedFunc>());
            values[i].v_handle = funcs.back().handle();
            codes[i] = kAnvilFunction;
        } else if (py::isinstance<py::function>(a)) {
            funcs.push_back(packed_from_callable(py::reinterpret_borrow<py::function>(a)));
            values[i].v_handle = funcs.back().handle();
            codes[i] = kAnvilFunction;
        } else {
            throw UserError("argument " + std::to_string(i) + " has type " +
                            py::str(a.get_type().attr("__name__")).cast<std::string>() +
                            ", which a packed call cannot pass (use anvil.nd.array for tensors)");
        }
    }
    runtime::RetValue ret;
    try {
        py::gil_scoped_release release;
        ret = f.call(values.data(), codes.data(), static_cast<int>(n));
    } catch (const UserError& e) {
        // The C ABI carries only the message, so every failed call arrives as UserError; the
        // prefix internal_error() writes says it was our bug.
        if (std::string_view(e.what()).starts_with("internal error at ")) {
            throw InternalError(e.what());
        }
        throw;
    }
    for (auto& [array, tensor] : write_back) {
        py::array result = ndarray_to_numpy(tensor, py::cast(tensor));
        array[py::ellipsis()] = result;
    }
    return ret_to_python(ret);
}

// DLPack export: the capsule holds a DLManagedTensor whose context keeps the NDArray alive.
struct DLPackContext {
    NDArray array;
    std::vector<int64_t> shape;
};

py::capsule to_dlpack(const NDArray& a) {
    if (runtime::is_string_dtype(a.dtype())) {
        throw UserError("a string tensor has no DLPack form; numpy() copies it into a str array");
    }
    auto* ctx = new DLPackContext{a, std::vector<int64_t>(a.shape().begin(), a.shape().end())};
    auto* managed = new DLManagedTensor{};
    managed->dl_tensor = *a.tensor();
    managed->dl_tensor.shape = ctx->shape.data();
    managed->dl_tensor.strides = nullptr;
    managed->manager_ctx = ctx;
    managed->deleter = [](DLManagedTensor* self) {
        delete static_cast<DLPackContext*>(self->manager_ctx);
        delete self;
    };
    // The consumer renames the capsule to "used_dltensor"; an unconsumed one is freed here.
    return py::capsule(managed, "dltensor", [](PyObject* capsule) {
        if (PyCapsule_IsValid(capsule, "dltensor")) {
            auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
            if (t && t->deleter) t->deleter(t);
        }
    });
}

bool is_compact(const DLTensor& t) {
    if (!t.strides) return true;
    int64_t expected = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
        if (t.shape[i] != 1 && t.strides[i] != expected) return false;
        expected *= t.shape[i];
    }
    return true;
}

// DLPack import: zero copy when the tensor is on the CPU, compact and aligned; otherwise a copy.
NDArray from_dlpack(const py::object& obj) {
    py::object capsule_obj = py::hasattr(obj, "__dlpack__") ? obj.attr("__dlpack__")() : obj;
    PyObject* capsule = capsule_obj.ptr();
    if (!PyCapsule_IsValid(capsule, "dltensor"))
        throw UserError(
            "from_dlpack expects an object with __dlpack__ or an unused DLPack capsule");
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    PyCapsule_SetName(capsule, "used_dltensor");
    PyCapsule_SetDestructor(capsule, nullptr);
    auto owner = make_ref<DLManagedOwner>(managed);
    const DLTensor& t = managed->dl_tensor;
    if (t.device.device_type != kDLCPU)
        throw UserError("from_dlpack: only CPU tensors are supported");
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    void* data = static_cast<char*>(t.data) + t.byte_offset;
    if (!is_compact(t)) throw UserError("from_dlpack: the tensor is not compact row-major");
    if (is_aligned(data)) return NDArray::wrap(data, std::move(shape), t.dtype, owner);
    NDArray out = NDArray::empty(shape, t.dtype);
    out.copy_from(data, out.nbytes());
    return out;
}

runtime::GraphExecutor& set_input_any(runtime::GraphExecutor& ex, const py::object& key,
                                      const py::object& value) {
    int index =
        py::isinstance<py::str>(key) ? ex.input_index(key.cast<std::string>()) : key.cast<int>();
    NDArray v = py::isinstance<NDArray>(value) ? value.cast<NDArray>()
                                               : ndarray_from_numpy(py::array(value));
    ex.set_input(index, v);
    return ex;
}

// GraphExecutor.run_with: converts the inputs while holding the GIL, runs without it.
std::vector<NDArray> run_with_any(const runtime::GraphExecutor& ex, const py::list& inputs) {
    std::vector<NDArray> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
        py::handle v = inputs[i];
        if (v.is_none()) {
            values.emplace_back();  // the executor names the input in its message
        } else if (py::isinstance<NDArray>(v)) {
            values.push_back(v.cast<NDArray>());
        } else {
            values.push_back(ndarray_from_numpy(py::array(py::reinterpret_borrow<py::object>(v))));
        }
    }
    py::gil_scoped_release release;
    return ex.run_with(values);
}

// A VM value from Python: None is an empty optional, a list or tuple a sequence (a tuple of
// values), anything else a tensor (an NDArray, or an array NumPy makes of it).
runtime::VMValue vm_value_from_python(const py::handle& v) {
    if (v.is_none()) return {};
    if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        std::vector<runtime::VMValue> fields;
        for (const auto& item : v) fields.push_back(vm_value_from_python(item));
        return runtime::VMValue::tuple(std::move(fields));
    }
    if (py::isinstance<NDArray>(v)) return v.cast<NDArray>();
    return ndarray_from_numpy(py::array(py::reinterpret_borrow<py::object>(v)));
}

// The other way: an NDArray, a list (a sequence or tuple) or None.
py::object vm_value_to_python(const runtime::VMValue& v) {
    switch (v.kind) {
        case runtime::VMValue::Kind::tensor:
            return py::cast(v.tensor);
        case runtime::VMValue::Kind::tuple: {
            py::list items;
            for (const auto& f : v.fields) items.append(vm_value_to_python(f));
            return items;
        }
        case runtime::VMValue::Kind::none:
            break;
    }
    return py::none();
}

}  // namespace

runtime::NDArray ndarray_from_numpy(const py::array& array, bool* copied) {
    if (holds_strings(array)) {
        if (copied) *copied = true;
        return strings_from_numpy(array);
    }
    DLDataType dtype = dtype_from_numpy(array.dtype());
    std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    bool contiguous = (array.flags() & py::array::c_style) != 0;
    if (contiguous && array.writeable() && is_aligned(array.data())) {
        if (copied) *copied = false;
        return NDArray::wrap(const_cast<void*>(array.data()), std::move(shape), dtype,
                             make_ref<PyOwner>(array));
    }
    if (copied) *copied = true;
    NDArray out = NDArray::empty(shape, dtype);
    py::array compact = py::array::ensure(array, py::array::c_style);
    out.copy_from(compact.data(), out.nbytes());
    return out;
}

py::array ndarray_to_numpy(const runtime::NDArray& a, py::handle base) {
    if (runtime::is_string_dtype(a.dtype())) return strings_to_numpy(a);  // a copy
    std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
    return py::array(dtype_to_numpy(a.dtype()), shape, a.raw_data(), base);
}

runtime::PackedFunc packed_from_callable(py::function f) {
    auto holder = std::make_shared<py::object>(std::move(f));
    // The closure may be destroyed on a thread without the GIL.
    std::shared_ptr<py::object> safe(new py::object(*holder), [](py::object* o) {
        if (Py_IsInitialized()) {
            py::gil_scoped_acquire gil;
            delete o;
        }
    });
    holder.reset();
    return PackedFunc([safe](const runtime::Args& args, runtime::RetValue* ret) {
        py::gil_scoped_acquire gil;
        try {
            py::tuple py_args(args.size());
            for (int i = 0; i < args.size(); ++i) py_args[i] = arg_to_python(args[i]);
            python_to_ret((*safe)(*py_args), ret);
        } catch (py::error_already_set& e) {
            throw UserError(std::string("Python function raised ") + e.what());
        }
    });
}

SourceLoc python_loc() {
    PyFrameObject* frame = PyEval_GetFrame();
    if (!frame) return {};
    PyCodeObject* code = PyFrame_GetCode(frame);
    SourceLoc loc;
    loc.file = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(code))
                   .attr("co_filename")
                   .cast<std::string>();
    loc.line = PyFrame_GetLineNumber(frame);
    return loc;
}

void init_runtime(py::module_& m) {
    py::class_<NDArray>(m, "NDArray", py::buffer_protocol(),
                        "A 64-byte aligned, row-major CPU tensor (anvil::runtime::NDArray).")
        .def_property_readonly(
            "shape",
            [](const NDArray& a) {
                return py::tuple(
                    py::cast(std::vector<int64_t>(a.shape().begin(), a.shape().end())));
            },
            "The dimensions, a tuple of ints.")
        .def_property_readonly(
            "dtype", [](const NDArray& a) { return runtime::dl_dtype_to_string(a.dtype()); },
            "The element type as a NumPy-style name (\"float32\", \"int64\", \"bool\", ...).")
        .def_property_readonly(
            "data_ptr", [](const NDArray& a) { return reinterpret_cast<uintptr_t>(a.raw_data()); },
            "Address of the tensor's first element.")
        .def_property_readonly(
            "device", [](const NDArray&) { return py::str("cpu(0)"); },
            "Where the data lives: always \"cpu(0)\" (the runtime has only the host CPU).")
        .def(
            "numpy", [](py::object self) { return ndarray_to_numpy(self.cast<NDArray>(), self); },
            "A NumPy array viewing this tensor's data (no copy; it keeps the tensor alive).")
        .def(
            "asnumpy", [](py::object self) { return ndarray_to_numpy(self.cast<NDArray>(), self); },
            "Same as numpy().")
        .def(
            "copyfrom",
            [](NDArray& a, const py::object& src) {
                NDArray s = py::isinstance<NDArray>(src) ? src.cast<NDArray>()
                                                         : ndarray_from_numpy(py::array(src));
                if (!std::equal(s.shape().begin(), s.shape().end(), a.shape().begin(),
                                a.shape().end()) ||
                    !runtime::dl_dtype_equal(s.dtype(), a.dtype()))
                    throw UserError("copyfrom: source " + s.str() + " does not match " + a.str());
                a.copy_from(s.raw_data(), s.nbytes());
                return a;
            },
            "Copies a NumPy array or NDArray of the same shape and dtype into this tensor.")
        .def(
            "__dlpack__", [](const NDArray& a, py::object) { return to_dlpack(a); },
            py::arg("stream") = py::none())
        .def("__dlpack_device__",
             [](const NDArray&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); })
        .def_buffer([](NDArray& a) {
            py::dtype dt = dtype_to_numpy(a.dtype());
            std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
            std::vector<py::ssize_t> strides(shape.size());
            py::ssize_t stride = dt.itemsize();
            for (size_t i = shape.size(); i-- > 0;) {
                strides[i] = stride;
                stride *= shape[i];
            }
            return py::buffer_info(a.raw_data(), dt.itemsize(),
                                   py::str(dt.attr("char")).cast<std::string>(),
                                   static_cast<py::ssize_t>(shape.size()), shape, strides);
        })
        .def("__repr__", [](const NDArray& a) { return "<anvil.NDArray " + a.str() + ">"; });

    m.def(
        "ndarray_from_numpy",
        [](const py::array& array) {
            bool copied = false;
            NDArray a = ndarray_from_numpy(array, &copied);
            return py::make_tuple(a, copied);
        },
        "(NDArray, copied): a zero-copy view when the array is aligned, else a copy.");
    m.def("ndarray_empty", [](const std::vector<int64_t>& shape, const std::string& dtype) {
        return NDArray::empty(shape, runtime::dl_dtype_from_string(dtype));
    });
    m.def("from_dlpack", &from_dlpack);

    py::class_<PackedFunc>(m, "PackedFunc", "A function with the runtime's packed convention.")
        .def("__call__", [](const PackedFunc& f, py::args args) { return call_packed(f, args); });

    py::class_<runtime::Module>(m, "Module", "Compiled code (wrapped by anvil.runtime.Module).")
        .def(
            "get_function",
            [](const runtime::Module& mod, const std::string& name) -> py::object {
                PackedFunc f = mod.get_function(name);
                if (!f) return py::none();
                return py::cast(f);
            },
            py::arg("name"), "The function called `name` as a PackedFunc, or None.")
        .def_property_readonly("function_names", &runtime::Module::function_names,
                               "The names of the module's functions.")
        .def_property_readonly("type_key", &runtime::Module::type_key,
                               "What kind of module this is (\"llvm\", \"shared_library\", ...).")
        .def("get_source", &codegen::get_source, py::arg("format") = "ll",
             "The module's text: \"ll\" (LLVM IR) or \"asm\" (target assembly).")
        .def(
            "export_library",
            [](const runtime::Module& mod, const std::string& path, const std::string& cc) {
                codegen::export_library(mod, path, cc);
            },
            py::arg("path"), py::arg("cc") = "");
    m.def("load_module", &runtime::load_module, py::arg("path"));

    py::class_<runtime::GraphExecutor>(
        m, "GraphExecutor",
        "Runs a static model library (lib[\"default\"](dev)): a fixed sequence of kernel calls "
        "over memory planned once. Wrap it in anvil.runtime.GraphModule for TVM's interface.")
        .def_static("load", &runtime::GraphExecutor::load, py::arg("path"),
                    "The executor of a model library written by export_library.")
        .def_property_readonly("num_inputs", &runtime::GraphExecutor::num_inputs,
                               "The number of model inputs (weights are not inputs).")
        .def_property_readonly("num_outputs", &runtime::GraphExecutor::num_outputs,
                               "The number of model outputs.")
        .def("input_index", &runtime::GraphExecutor::input_index, py::arg("name"),
             "The index of the input called `name` (UserError when there is none).")
        .def(
            "input_name",
            [](const runtime::GraphExecutor& ex, int i) { return ex.input_info(i).name; },
            py::arg("index"), "The name of input `index`.")
        .def(
            "output_name",
            [](const runtime::GraphExecutor& ex, int i) { return ex.output_info(i).name; },
            py::arg("index"), "The name of output `index`.")
        .def("set_input", &set_input_any, py::arg("key"), py::arg("value"),
             py::return_value_policy::reference,
             "Copies `value` (NumPy array or NDArray of the input's shape and dtype) into the "
             "input `key` (a name or an index); returns the executor.")
        .def("get_input", &runtime::GraphExecutor::get_input, py::arg("index"),
             "A view of input `index` (no copy).")
        .def("get_output", &runtime::GraphExecutor::get_output, py::arg("index"),
             "A view of output `index` (no copy); the next run overwrites it.")
        .def("run", &runtime::GraphExecutor::run, py::call_guard<py::gil_scoped_release>(),
             "Runs the model once on the current inputs.")
        .def("run_with", &run_with_any, py::arg("inputs"),
             "Runs the model on `inputs` (a list with one NumPy array or NDArray per input, in "
             "order) and returns a list of fresh output NDArrays. Safe to call from many threads "
             "at once on one executor (the GIL is released while it runs).")
        .def_property_readonly("num_workspaces", &runtime::GraphExecutor::num_workspaces,
                               "How many workspaces run_with has made (at most the number of "
                               "calls that ran at once).")
        .def(
            "get_param",
            [](const runtime::GraphExecutor& ex, const std::string& name) {
                return ex.get_param(name);
            },
            py::arg("name"), "A view of the weight `name` (read in place from the library).")
        .def_property_readonly(
            "param_names",
            [](const runtime::GraphExecutor& ex) {
                std::vector<std::string> names;
                for (const auto& [name, p] : ex.plan().params) names.push_back(name);
                return names;
            },
            "The names of the model's weights (get_param).")
        .def_property_readonly("planned_bytes", &runtime::GraphExecutor::planned_bytes,
                               "Bytes of the planned intermediate and output storage.")
        .def_property_readonly("param_bytes", &runtime::GraphExecutor::param_bytes,
                               "Bytes of the model's weights.");

    py::class_<runtime::VirtualMachine>(m, "VirtualMachine",
                                        "Runs a VM artifact (run-time shapes, control flow, "
                                        "registry calls).")
        .def_static("load", &runtime::VirtualMachine::load, py::arg("path"),
                    "The VM of a library exported with executor=\"vm\".")
        .def_static("is_vm_artifact", &runtime::VirtualMachine::is_vm_artifact, py::arg("path"),
                    "Whether the library at `path` holds a VM program (not a graph plan).")
        .def_property_readonly("input_names", &runtime::VirtualMachine::input_names,
                               "The names of main's inputs, in order.")
        .def_property_readonly("output_names", &runtime::VirtualMachine::output_names,
                               "The names of main's outputs, in order.")
        .def_property_readonly(
            "input_kinds",
            [](const runtime::VirtualMachine& vm) {
                std::vector<std::string> kinds;
                for (int i = 0; i < static_cast<int>(vm.input_names().size()); ++i) {
                    runtime::VMInputInfo info = vm.input_info(i);
                    std::string kind = info.sequence ? "sequence" : "tensor";
                    kinds.push_back(info.optional ? "optional " + kind : kind);
                }
                return kinds;
            },
            "What each input takes: \"tensor\", \"sequence\", \"optional tensor\" or "
            "\"optional sequence\".")
        .def(
            "run",
            [](runtime::VirtualMachine& vm, const std::vector<py::object>& inputs) {
                std::vector<runtime::VMValue> values;
                for (const auto& v : inputs) values.push_back(vm_value_from_python(v));
                std::vector<runtime::VMValue> outputs;
                {
                    // Registry functions written in Python take the GIL back when called.
                    py::gil_scoped_release release;
                    outputs = vm.run_values(std::move(values));
                }
                py::list out;
                for (const auto& v : outputs) out.append(vm_value_to_python(v));
                return out;
            },
            py::arg("inputs"),
            "Runs main on `inputs` (in order: NumPy arrays or NDArrays, a list of them for a "
            "sequence, None for an empty optional); returns a list with one value per output: an "
            "NDArray, a list of NDArrays (a sequence) or None (an empty optional).")
        .def(
            "get_param",
            [](const runtime::VirtualMachine& vm, const std::string& name) {
                return vm.get_param(name);
            },
            py::arg("name"), "A view of the weight `name` (read in place from the library).")
        .def_property_readonly(
            "param_names",
            [](const runtime::VirtualMachine& vm) {
                std::vector<std::string> names;
                for (const auto& [name, p] : vm.program().params) names.push_back(name);
                return names;
            },
            "The names of the model's weights (get_param).")
        .def_property_readonly(
            "pool_bytes",
            [](const runtime::VirtualMachine& vm) { return vm.pool_stats().bytes_held; },
            "Bytes the VM's memory pool holds for reuse.");

    m.def(
        "register_func",
        [](const std::string& name, py::function f, bool override) {
            runtime::register_global_func(name, packed_from_callable(std::move(f)), override);
        },
        py::arg("name"), py::arg("f"), py::arg("override") = false);
    m.def(
        "get_global_func",
        [](const std::string& name) -> py::object {
            PackedFunc f = runtime::get_global_func(name);
            if (!f) return py::none();
            return py::cast(f);
        },
        py::arg("name"));
    m.def("remove_global_func", &runtime::remove_global_func);

    // Two C++ functions for calls in both directions (tests, examples): "testing.echo" returns its
    // argument, "testing.call" calls its first argument (a function) with the others.
    runtime::register_global_func("testing.echo",
                                  PackedFunc([](const runtime::Args& args, runtime::RetValue* ret) {
                                      const runtime::ArgValue a = args[0];
                                      switch (a.type_code()) {
                                          case kAnvilInt:
                                              *ret = a.as_int();
                                              break;
                                          case kAnvilFloat:
                                              *ret = a.as_float();
                                              break;
                                          case kAnvilStr:
                                              *ret = a.as_string();
                                              break;
                                          case kAnvilDLTensor:
                                              *ret = a.as_tensor();
                                              break;
                                          default:
                                              ret->set_null();
                                      }
                                  }),
                                  true);
    runtime::register_global_func(
        "testing.call", PackedFunc([](const runtime::Args& args, runtime::RetValue* ret) {
            PackedFunc f = args[0].as_func();
            *ret = f.call(args.values() + 1, args.type_codes() + 1, args.size() - 1);
        }),
        true);
    m.def("list_global_func_names", &runtime::list_global_func_names,
          "The names of every registered global function, sorted.");

    // Raises InternalError as a compiler bug would, to test how Python sees one.
    runtime::register_global_func("testing.raise_internal_error",
                                  PackedFunc([](const runtime::Args& args, runtime::RetValue*) {
                                      internal_error() << args[0].as_string();
                                  }),
                                  true);
}

}  // namespace anvil::python
