// Bindings of the RPC client (runtime/rpc/client.h), wrapped by anvil.rpc in TVM's names. Every
// call that talks to the server releases the GIL.
#include <pybind11/stl.h>

#include "bindings.h"
#include "runtime/rpc/auth_key.h"
#include "runtime/rpc/client.h"
#include "support/error.h"
#include "tune/child_process.h"

namespace anvil::python {

namespace {

using rpc::RemoteArg;
using rpc::RemoteGraphExecutor;
using rpc::RemoteModule;
using rpc::RemoteTensor;
using rpc::RpcSession;
using Session = std::shared_ptr<RpcSession>;
using release_gil = py::call_guard<py::gil_scoped_release>;

runtime::NDArray as_ndarray(const py::handle& value) {
    if (py::isinstance<runtime::NDArray>(value)) return value.cast<runtime::NDArray>();
    return ndarray_from_numpy(py::array(py::reinterpret_borrow<py::object>(value)));
}

std::vector<runtime::NDArray> as_ndarrays(const py::sequence& values) {
    std::vector<runtime::NDArray> out;
    for (const py::handle& v : values) out.push_back(as_ndarray(v));
    return out;
}

// A kernel argument: a remote tensor, an int, a float or a str.
RemoteArg as_remote_arg(const py::handle& value, size_t index) {
    if (py::isinstance<RemoteTensor>(value)) return RemoteArg::tensor(value.cast<RemoteTensor>());
    if (py::isinstance<py::bool_>(value) || py::isinstance<py::int_>(value)) {
        return RemoteArg::integer(value.cast<int64_t>());
    }
    if (py::isinstance<py::float_>(value)) return RemoteArg::real(value.cast<double>());
    if (py::isinstance<py::str>(value)) return RemoteArg::string(value.cast<std::string>());
    throw UserError("argument " + std::to_string(index) + " of a remote function is a " +
                    py::str(py::type::of(value).attr("__name__")).cast<std::string>() +
                    "; remote functions take tensors on the remote device (anvil.nd.array(x, "
                    "device=remote.cpu(0))), ints, floats and strs");
}

std::vector<RemoteArg> as_remote_args(const py::sequence& values) {
    std::vector<RemoteArg> args;
    for (size_t i = 0; i < values.size(); ++i) args.push_back(as_remote_arg(values[i], i));
    return args;
}

py::dict tensor_info(const rpc::RemoteTensorInfo& info) {
    py::dict d;
    d["name"] = info.name;
    d["shape"] = info.shape;
    d["dtype"] = runtime::dl_dtype_to_string(info.dtype);
    return d;
}

}  // namespace

void init_rpc(py::module_& m) {
    py::class_<RpcSession, Session>(m, "RpcSession", "A session on an RPC server.")
        .def_static(
            "connect",
            [](const std::string& host, int port, const std::string& key, double timeout) {
                return RpcSession::connect(host, port, rpc::resolve_auth_key(key, "auth_key"),
                                           {.connect_timeout_s = timeout});
            },
            py::arg("host"), py::arg("port"), py::arg("auth_key"), py::arg("timeout"),
            release_gil())
        .def("upload", &RpcSession::upload, py::arg("path"), py::arg("target") = "", release_gil())
        .def(
            "upload_bytes",
            [](RpcSession& s, const py::bytes& data, const std::string& target) {
                std::string bytes = data;
                py::gil_scoped_release unlocked;
                s.upload_bytes(bytes, target);
            },
            py::arg("data"), py::arg("target"))
        .def(
            "request",
            [](RpcSession& s, const std::string& header_json) {
                rpc::Message m;
                m.header = rpc::Json::parse(header_json, nullptr, false);
                if (!m.header.is_object())
                    throw UserError("request: the header is not a JSON object");
                rpc::Message reply;
                {
                    py::gil_scoped_release unlocked;
                    reply = s.request(std::move(m));
                }
                return reply.header.dump();
            },
            py::arg("header_json"), "Sends one request (a JSON object); the reply's header.")
        .def_property_readonly("address", &RpcSession::address)
        .def_property_readonly("limits", [](const RpcSession& s) { return s.limits().dump(); });

    py::class_<rpc::TrackerClient>(m, "TrackerClient", "A connection to an RPC tracker.")
        .def(
            py::init([](const std::string& host, int port, const std::string& key, double timeout) {
                return std::make_unique<rpc::TrackerClient>(
                    host, port, rpc::resolve_auth_key(key, "auth_key"),
                    rpc::ClientOptions{.connect_timeout_s = timeout});
            }),
            py::arg("host"), py::arg("port"), py::arg("auth_key"), py::arg("timeout"),
            release_gil())
        .def("request", &rpc::TrackerClient::request, py::arg("device_key"), py::arg("priority"),
             py::arg("wait_s"), release_gil())
        .def(
            "status",
            [](rpc::TrackerClient& t) {
                rpc::Json status;
                {
                    py::gil_scoped_release unlocked;
                    status = t.status();
                }
                return status.dump();
            },
            "The tracker's devices and queues, as JSON text.")
        .def_property_readonly("address", &rpc::TrackerClient::address);

    py::class_<RemoteTensor>(m, "RemoteTensor", "A tensor on the remote device.")
        .def_static(
            "from_array",
            [](const Session& s, const py::object& value) {
                runtime::NDArray local = as_ndarray(value);
                py::gil_scoped_release unlocked;
                return RemoteTensor::from(s, local);
            },
            py::arg("session"), py::arg("value"))
        .def_static(
            "empty",
            [](const Session& s, const std::vector<int64_t>& shape, const std::string& dtype) {
                DLDataType t = runtime::dl_dtype_from_string(dtype);
                py::gil_scoped_release unlocked;
                return RemoteTensor::empty(s, shape, t);
            },
            py::arg("session"), py::arg("shape"), py::arg("dtype"))
        .def("to_local", &RemoteTensor::to_local, release_gil())
        .def(
            "copyfrom",
            [](const RemoteTensor& t, const py::object& value) {
                runtime::NDArray local = as_ndarray(value);
                if (!std::equal(local.shape().begin(), local.shape().end(), t.shape().begin(),
                                t.shape().end()) ||
                    !runtime::dl_dtype_equal(local.dtype(), t.dtype())) {
                    throw UserError("copyfrom: source " + local.str() +
                                    " does not match the remote "
                                    "tensor's " +
                                    runtime::dl_dtype_to_string(t.dtype()) + " shape");
                }
                py::gil_scoped_release unlocked;
                t.copy_from(local);
            },
            py::arg("value"))
        .def_property_readonly("shape",
                               [](const RemoteTensor& t) { return py::tuple(py::cast(t.shape())); })
        .def_property_readonly(
            "dtype", [](const RemoteTensor& t) { return runtime::dl_dtype_to_string(t.dtype()); });

    py::class_<RemoteModule>(m, "RemoteModule", "A library loaded on the remote device.")
        .def_static("load", &RemoteModule::load, py::arg("session"), py::arg("name"), release_gil())
        .def_property_readonly("function_names", &RemoteModule::function_names)
        .def_property_readonly("executor_kind", &RemoteModule::executor_kind)
        .def(
            "call",
            [](const RemoteModule& mod, const std::string& name, const py::sequence& args) {
                std::vector<RemoteArg> remote_args = as_remote_args(args);
                py::gil_scoped_release unlocked;
                mod.call(name, remote_args);
            },
            py::arg("name"), py::arg("args"))
        .def(
            "time_evaluator",
            [](const RemoteModule& mod, const std::string& name, const py::sequence& args,
               int number, int repeat, double min_repeat_ms) {
                std::vector<RemoteArg> remote_args = as_remote_args(args);
                py::gil_scoped_release unlocked;
                return mod.time_evaluator(name, remote_args, number, repeat, min_repeat_ms);
            },
            py::arg("name"), py::arg("args"), py::arg("number"), py::arg("repeat"),
            py::arg("min_repeat_ms"));

    py::class_<RemoteGraphExecutor>(m, "RemoteGraphExecutor",
                                    "A model's executor (graph or VM) on the remote device.")
        .def_static("create", &RemoteGraphExecutor::create, py::arg("module"), release_gil())
        .def_property_readonly("is_vm", &RemoteGraphExecutor::is_vm)
        .def_property_readonly("inputs",
                               [](const RemoteGraphExecutor& ex) {
                                   py::list l;
                                   for (const auto& info : ex.inputs()) l.append(tensor_info(info));
                                   return l;
                               })
        .def_property_readonly("output_names", &RemoteGraphExecutor::output_names)
        .def(
            "run_with",
            [](const RemoteGraphExecutor& ex, const py::sequence& inputs) {
                std::vector<runtime::NDArray> local = as_ndarrays(inputs);
                py::gil_scoped_release unlocked;
                return ex.run_with(local);
            },
            py::arg("inputs"))
        .def(
            "set_input",
            [](const RemoteGraphExecutor& ex, const py::object& key, const RemoteTensor& value) {
                if (py::isinstance<py::str>(key)) {
                    std::string name = key.cast<std::string>();
                    py::gil_scoped_release unlocked;
                    ex.set_input(name, value);
                } else {
                    int index = key.cast<int>();
                    py::gil_scoped_release unlocked;
                    ex.set_input(index, value);
                }
            },
            py::arg("key"), py::arg("value"))
        .def("run", &RemoteGraphExecutor::run, release_gil())
        .def("get_output", &RemoteGraphExecutor::get_output, py::arg("index"), release_gil())
        .def("time_evaluator", &RemoteGraphExecutor::time_evaluator, py::arg("number"),
             py::arg("repeat"), py::arg("min_repeat_ms"), release_gil())
        .def("profile", &RemoteGraphExecutor::profile, py::arg("number"), py::arg("repeat"),
             release_gil());

    m.def("rpc_server_path", [] {
#ifdef ANVIL_RPC_SERVER_BUILD_PATH
        const std::string build_path = ANVIL_RPC_SERVER_BUILD_PATH;
#else
        const std::string build_path;
#endif
        return tune::find_helper_program("anvil-rpc-server", "ANVIL_RPC_SERVER", build_path);
    });
    m.def("rpc_tracker_path", [] {
#ifdef ANVIL_RPC_TRACKER_BUILD_PATH
        const std::string build_path = ANVIL_RPC_TRACKER_BUILD_PATH;
#else
        const std::string build_path;
#endif
        return tune::find_helper_program("anvil-rpc-tracker", "ANVIL_RPC_TRACKER", build_path);
    });
}

}  // namespace anvil::python
