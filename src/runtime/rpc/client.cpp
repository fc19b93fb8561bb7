#include "runtime/rpc/client.h"

#include <fstream>
#include <iterator>

#include "runtime/rpc/connection.h"
#include "support/error.h"

namespace anvil::rpc {

namespace {

// A chunk of an upload leaves room for the header within the server's message limit.
constexpr int64_t kMaxChunkBytes = int64_t{64} << 20;

Json info_shape(const runtime::NDArray& t) {
    return std::vector<int64_t>(t.shape().begin(), t.shape().end());
}

RemoteTensorInfo tensor_info(const Json& j) {
    RemoteTensorInfo info;
    if (j.contains("name")) info.name = header_string(j, "name");
    if (j.contains("shape")) info.shape = header_int_list(j, "shape");
    info.dtype = runtime::dl_dtype_from_string(header_string(j, "dtype"));
    return info;
}

runtime::NDArray local_tensor(const Json& info, const std::string& bytes) {
    runtime::NDArray t =
        runtime::NDArray::empty(header_int_list(info, "shape"),
                                runtime::dl_dtype_from_string(header_string(info, "dtype")));
    t.copy_from(bytes.data(), bytes.size());
    return t;
}

std::string bytes_of(const runtime::NDArray& t) {
    std::string data(t.nbytes(), '\0');
    t.copy_to(data.data(), data.size());
    return data;
}

}  // namespace

struct RpcSession::State {
    std::unique_ptr<Connection> connection;
    Json limits;
};

RpcSession::RpcSession(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::shared_ptr<RpcSession> RpcSession::connect(const std::string& host, int port,
                                                const std::string& auth_key,
                                                const ClientOptions& options,
                                                const std::string& ticket) {
    auto state = std::make_unique<State>();
    state->connection =
        std::make_unique<Connection>(host, port, auth_key, options.connect_timeout_s);
    Message open;
    open.header["op"] = "session.open";
    if (!ticket.empty()) open.header["ticket"] = ticket;
    Message reply = state->connection->round_trip(std::move(open), options.connect_timeout_s);
    state->limits = reply.header.value("limits", Json::object());
    return std::shared_ptr<RpcSession>(new RpcSession(std::move(state)));
}

RpcSession::~RpcSession() {
    if (!state_->connection->usable()) return;
    try {
        Message close;
        close.header["op"] = "session.close";
        state_->connection->round_trip(std::move(close), 5);
    } catch (const std::exception&) {
        // The server closes idle sessions itself.
    }
}

Message RpcSession::request(Message request, double timeout_s) {
    double timeout = 600;
    if (state_->limits.contains("request_timeout_s") &&
        state_->limits["request_timeout_s"].is_number()) {
        timeout = state_->limits["request_timeout_s"].get<double>();
    }
    if (timeout_s > 0) {
        request.header["timeout_s"] = timeout_s;
        timeout = std::min(timeout, timeout_s);
    }
    // The server answers by its timeout; the margin covers transfers.
    return state_->connection->round_trip(std::move(request), timeout + 60);
}

void RpcSession::free(int64_t handle) noexcept {
    try {
        Message m;
        m.header["op"] = "free";
        m.header["handle"] = handle;
        request(std::move(m));
    } catch (const std::exception&) {
    }
}

void RpcSession::upload_bytes(const std::string& data, const std::string& remote_name) {
    int64_t chunk = kMaxChunkBytes;
    if (limits().contains("max_message_bytes") &&
        limits()["max_message_bytes"].is_number_integer()) {
        chunk = std::min(chunk, limits()["max_message_bytes"].get<int64_t>());
    }
    int64_t offset = 0;
    do {
        Message m;
        m.header["op"] = "upload";
        m.header["name"] = remote_name;
        m.header["offset"] = offset;
        int64_t n = std::min<int64_t>(chunk, static_cast<int64_t>(data.size()) - offset);
        m.blobs.push_back(data.substr(static_cast<size_t>(offset), static_cast<size_t>(n)));
        request(std::move(m));
        offset += n;
    } while (offset < static_cast<int64_t>(data.size()));
}

void RpcSession::upload(const std::string& local_path, const std::string& remote_name) {
    std::ifstream in(local_path, std::ios::binary);
    if (!in) user_error() << "upload: cannot read '" << local_path << "'";
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string name = remote_name;
    if (name.empty()) name = local_path.substr(local_path.find_last_of('/') + 1);
    upload_bytes(data, name);
}

const std::string& RpcSession::address() const {
    return state_->connection->address();
}
const Json& RpcSession::limits() const {
    return state_->limits;
}

RemoteHandle::RemoteHandle(std::shared_ptr<RpcSession> session, int64_t id)
    : holder_(new Holder{std::move(session), id}) {}

RpcSession& RemoteHandle::session() const {
    if (!holder_) user_error() << "RPC: use of an empty remote handle";
    return *holder_->session;
}

const std::shared_ptr<RpcSession>& RemoteHandle::session_ptr() const {
    if (!holder_) user_error() << "RPC: use of an empty remote handle";
    return holder_->session;
}

RemoteTensor RemoteTensor::empty(const std::shared_ptr<RpcSession>& session,
                                 const std::vector<int64_t>& shape, DLDataType dtype) {
    Message m;
    m.header["op"] = "tensor.empty";
    m.header["shape"] = shape;
    m.header["dtype"] = runtime::dl_dtype_to_string(dtype);
    Message reply = session->request(std::move(m));
    RemoteTensor t;
    t.handle_ = RemoteHandle(session, header_int(reply.header, "tensor"));
    t.shape_ = shape;
    t.dtype_ = dtype;
    return t;
}

RemoteTensor RemoteTensor::from(const std::shared_ptr<RpcSession>& session,
                                const runtime::NDArray& local) {
    Message m;
    m.header["op"] = "tensor.from_bytes";
    m.header["shape"] = info_shape(local);
    m.header["dtype"] = runtime::dl_dtype_to_string(local.dtype());
    m.blobs.push_back(bytes_of(local));
    Message reply = session->request(std::move(m));
    RemoteTensor t;
    t.handle_ = RemoteHandle(session, header_int(reply.header, "tensor"));
    t.shape_.assign(local.shape().begin(), local.shape().end());
    t.dtype_ = local.dtype();
    return t;
}

void RemoteTensor::copy_from(const runtime::NDArray& local) const {
    Message m;
    m.header["op"] = "tensor.copy_from";
    m.header["tensor"] = handle_.id();
    m.blobs.push_back(bytes_of(local));
    handle_.session().request(std::move(m));
}

runtime::NDArray RemoteTensor::to_local() const {
    Message m;
    m.header["op"] = "tensor.copy_to";
    m.header["tensor"] = handle_.id();
    Message reply = handle_.session().request(std::move(m));
    if (reply.blobs.size() != 1) user_error() << "RPC: tensor.copy_to: the reply has no data";
    return local_tensor(reply.header, reply.blobs[0]);
}

RemoteModule RemoteModule::load(const std::shared_ptr<RpcSession>& session,
                                const std::string& name) {
    Message m;
    m.header["op"] = "load_module";
    m.header["name"] = name;
    Message reply = session->request(std::move(m));
    RemoteModule module;
    module.handle_ = RemoteHandle(session, header_int(reply.header, "module"));
    for (const Json& f : header_array(reply.header, "functions")) {
        if (f.is_string()) module.functions_.push_back(f.get<std::string>());
    }
    module.executor_kind_ = header_string(reply.header, "executor");
    return module;
}

void RemoteModule::call(const std::string& function, const std::vector<RemoteArg>& args) const {
    Message m;
    m.header["op"] = "call";
    m.header["module"] = handle_.id();
    m.header["function"] = function;
    m.header["args"] = Json::array();
    for (const RemoteArg& a : args) m.header["args"].push_back(a.value);
    handle_.session().request(std::move(m));
}

std::vector<double> RemoteModule::time_evaluator(const std::string& function,
                                                 const std::vector<RemoteArg>& args, int number,
                                                 int repeat, double min_repeat_ms) const {
    Message m;
    m.header["op"] = "time_evaluator";
    m.header["module"] = handle_.id();
    m.header["function"] = function;
    m.header["args"] = Json::array();
    for (const RemoteArg& a : args) m.header["args"].push_back(a.value);
    m.header["number"] = number;
    m.header["repeat"] = repeat;
    m.header["min_repeat_ms"] = min_repeat_ms;
    Message reply = handle_.session().request(std::move(m));
    return reply.header.at("times_s").get<std::vector<double>>();
}

RemoteGraphExecutor RemoteGraphExecutor::create(const RemoteModule& module) {
    bool vm = module.executor_kind() == "vm";
    Message m;
    m.header["op"] = vm ? "vm.create" : "graph_executor.create";
    m.header["module"] = module.handle().id();
    Message reply = module.handle().session().request(std::move(m));
    RemoteGraphExecutor ex;
    ex.handle_ = RemoteHandle(module.handle().session_ptr(), header_int(reply.header, "executor"));
    ex.vm_ = vm;
    for (const Json& j : header_array(reply.header, "inputs")) ex.inputs_.push_back(tensor_info(j));
    for (const Json& j : header_array(reply.header, "outputs")) {
        ex.output_names_.push_back(j.is_string() ? j.get<std::string>() : tensor_info(j).name);
    }
    return ex;
}

std::vector<runtime::NDArray> RemoteGraphExecutor::run_with(
    const std::vector<runtime::NDArray>& inputs) const {
    Message m;
    m.header["op"] = "executor.run_with";
    m.header["executor"] = handle_.id();
    m.header["shapes"] = Json::array();
    m.header["dtypes"] = Json::array();
    for (const runtime::NDArray& t : inputs) {
        m.header["shapes"].push_back(info_shape(t));
        m.header["dtypes"].push_back(runtime::dl_dtype_to_string(t.dtype()));
        m.blobs.push_back(bytes_of(t));
    }
    Message reply = handle_.session().request(std::move(m));
    const Json& outputs = header_array(reply.header, "outputs");
    if (outputs.size() != reply.blobs.size()) {
        user_error() << "RPC: executor.run_with: the reply's outputs and data do not match";
    }
    std::vector<runtime::NDArray> result;
    for (size_t i = 0; i < outputs.size(); ++i)
        result.push_back(local_tensor(outputs[i], reply.blobs[i]));
    return result;
}

void RemoteGraphExecutor::set_input(int index, const RemoteTensor& value) const {
    Message m;
    m.header["op"] = "graph_executor.set_input";
    m.header["executor"] = handle_.id();
    m.header["index"] = index;
    m.header["tensor"] = value.handle().id();
    handle_.session().request(std::move(m));
}

void RemoteGraphExecutor::set_input(const std::string& name, const RemoteTensor& value) const {
    Message m;
    m.header["op"] = "graph_executor.set_input";
    m.header["executor"] = handle_.id();
    m.header["name"] = name;
    m.header["tensor"] = value.handle().id();
    handle_.session().request(std::move(m));
}

void RemoteGraphExecutor::run() const {
    Message m;
    m.header["op"] = "graph_executor.run";
    m.header["executor"] = handle_.id();
    handle_.session().request(std::move(m));
}

RemoteTensor RemoteGraphExecutor::get_output(int index) const {
    Message m;
    m.header["op"] = "graph_executor.get_output";
    m.header["executor"] = handle_.id();
    m.header["index"] = index;
    Message reply = handle_.session().request(std::move(m));
    RemoteTensor t;
    t.handle_ = RemoteHandle(handle_.session_ptr(), header_int(reply.header, "tensor"));
    t.shape_ = header_int_list(reply.header, "shape");
    t.dtype_ = runtime::dl_dtype_from_string(header_string(reply.header, "dtype"));
    return t;
}

std::vector<double> RemoteGraphExecutor::time_evaluator(int number, int repeat,
                                                        double min_repeat_ms) const {
    Message m;
    m.header["op"] = "time_evaluator";
    m.header["executor"] = handle_.id();
    m.header["number"] = number;
    m.header["repeat"] = repeat;
    m.header["min_repeat_ms"] = min_repeat_ms;
    Message reply = handle_.session().request(std::move(m));
    return reply.header.at("times_s").get<std::vector<double>>();
}

std::string RemoteGraphExecutor::profile(int number, int repeat) const {
    Message m;
    m.header["op"] = "executor.profile";
    m.header["executor"] = handle_.id();
    m.header["number"] = number;
    m.header["repeat"] = repeat;
    Message reply = handle_.session().request(std::move(m));
    return header_string(reply.header, "report");
}

TrackerClient::TrackerClient(const std::string& host, int port, const std::string& auth_key,
                             const ClientOptions& options)
    : connection_(std::make_unique<Connection>(host, port, auth_key, options.connect_timeout_s)),
      auth_key_(auth_key),
      options_(options) {}

TrackerClient::~TrackerClient() = default;

std::shared_ptr<RpcSession> TrackerClient::request(const std::string& device_key, int priority,
                                                   double wait_s) {
    Message m;
    m.header = {{"op", "tracker.request"}, {"device_key", device_key}, {"priority", priority}};
    if (wait_s > 0) m.header["wait_s"] = wait_s;
    // A device can go away between the tracker's answer and the connection (TVM's max_retry):
    // ask again, a few times; the tracker says so when no device of the key is left.
    for (int attempt = 1;; ++attempt) {
        // The tracker answers by wait_s (or when no device of the key is left); the margin
        // covers the trip.
        Message reply = connection_->round_trip(m, wait_s > 0 ? wait_s + 30 : 1e9);
        try {
            return RpcSession::connect(header_string(reply.header, "host"),
                                       static_cast<int>(header_int(reply.header, "port")),
                                       auth_key_, options_, header_string(reply.header, "ticket"));
        } catch (const UserError&) {
            if (attempt == 3) throw;
        }
    }
}

Json TrackerClient::status() {
    Message m;
    m.header["op"] = "tracker.status";
    Message reply = connection_->round_trip(std::move(m), options_.connect_timeout_s);
    reply.header.erase("id");
    return reply.header;
}

const std::string& TrackerClient::address() const {
    return connection_->address();
}

}  // namespace anvil::rpc
