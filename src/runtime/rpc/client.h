// The RPC client: a session on a remote server (server.h), and handles to what lives there.
//
//   auto remote = RpcSession::connect("192.168.1.7", 9090, key);
//   remote->upload("model.so");
//   RemoteModule lib = RemoteModule::load(remote, "model.so");
//   RemoteGraphExecutor ex = RemoteGraphExecutor::create(lib);
//   std::vector<NDArray> outputs = ex.run_with({image});            // one round trip
//   std::vector<double> times = ex.time_evaluator(10, 3, 0);        // timed on the device
//
// Every failure is a UserError saying where: "remote 192.168.1.7:9090: <what the server said>"
// for a failed request; for the connection, whether it was refused, the handshake failed (the
// auth key is not the server's) or the server did not answer in time. A request waits at most the
// server's request timeout (which the server enforces itself) plus a margin, so nothing hangs.
// Handles free their remote object when the last copy goes; a session closes with its RpcSession.
// An RpcSession serves one thread at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/ndarray.h"
#include "runtime/rpc/message.h"

namespace anvil::rpc {

struct ClientOptions {
    double connect_timeout_s = 10;  // connection, handshake and session.open
};

class RpcSession {
public:
    // Connects, authenticates (auth_key.h) and opens a session; `ticket`: the one the tracker
    // gave for a session it reserved (TrackerClient::request).
    static std::shared_ptr<RpcSession> connect(const std::string& host, int port,
                                               const std::string& auth_key,
                                               const ClientOptions& options = {},
                                               const std::string& ticket = "");
    ~RpcSession();
    RpcSession(const RpcSession&) = delete;
    RpcSession& operator=(const RpcSession&) = delete;

    // Sends `request` (its "id" is set here) and returns the reply; UserError for an error reply.
    // `timeout_s` > 0 asks the server to end the session when the request runs longer.
    Message request(Message request, double timeout_s = 0);
    // Frees a remote handle; errors are ignored (the session may be gone).
    void free(int64_t handle) noexcept;

    // Uploads a local file (in chunks the server's message limit allows) as `remote_name`
    // (default: the file's name); UserError when the file cannot be read.
    void upload(const std::string& local_path, const std::string& remote_name = "");
    void upload_bytes(const std::string& data, const std::string& remote_name);

    const std::string& address() const;  // "HOST:PORT"
    // The server's limits (max_message_bytes, max_upload_bytes, ...), from session.open.
    const Json& limits() const;

private:
    struct State;
    explicit RpcSession(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

class Connection;

// A connection to a tracker (tracker.h): devices by key, and what the pool holds.
class TrackerClient {
public:
    TrackerClient(const std::string& host, int port, const std::string& auth_key,
                  const ClientOptions& options = {});
    ~TrackerClient();

    // Waits in the key's queue for a free device (at most wait_s seconds when positive) and opens
    // a session on it (asking again, up to three times, when the device cannot be reached);
    // UserError at once when no device of the key is registered.
    std::shared_ptr<RpcSession> request(const std::string& device_key, int priority = 1,
                                        double wait_s = 0);
    // devices [{device_key, address, free, max_sessions}] and queues {device_key: waiting}.
    Json status();
    const std::string& address() const;

private:
    std::unique_ptr<Connection> connection_;
    std::string auth_key_;
    ClientOptions options_;
};

// A remote object; frees it when the last copy goes.
class RemoteHandle {
public:
    RemoteHandle() = default;
    RemoteHandle(std::shared_ptr<RpcSession> session, int64_t id);
    int64_t id() const { return holder_ ? holder_->id : 0; }
    RpcSession& session() const;
    const std::shared_ptr<RpcSession>& session_ptr() const;
    bool defined() const { return holder_ != nullptr; }

private:
    struct Holder {
        std::shared_ptr<RpcSession> session;
        int64_t id;
        ~Holder() { session->free(id); }
    };
    std::shared_ptr<Holder> holder_;
};

class RemoteTensor {
public:
    static RemoteTensor empty(const std::shared_ptr<RpcSession>& session,
                              const std::vector<int64_t>& shape, DLDataType dtype);
    // A remote copy of a local tensor (one round trip).
    static RemoteTensor from(const std::shared_ptr<RpcSession>& session,
                             const runtime::NDArray& local);

    void copy_from(const runtime::NDArray& local) const;  // same shape and dtype
    runtime::NDArray to_local() const;
    const std::vector<int64_t>& shape() const { return shape_; }
    DLDataType dtype() const { return dtype_; }
    const RemoteHandle& handle() const { return handle_; }

private:
    friend class RemoteGraphExecutor;
    RemoteHandle handle_;
    std::vector<int64_t> shape_;
    DLDataType dtype_{};
};

// A kernel argument of RemoteModule::call: a remote tensor, an integer, a float or a string.
struct RemoteArg {
    Json value;
    static RemoteArg tensor(const RemoteTensor& t) { return of("tensor", t.handle().id()); }
    static RemoteArg integer(int64_t v) { return of("int", v); }
    static RemoteArg real(double v) { return of("float", v); }
    static RemoteArg string(const std::string& v) { return of("str", v); }

private:
    static RemoteArg of(const char* kind, Json v) {
        RemoteArg arg;
        arg.value[kind] = std::move(v);
        return arg;
    }
};

class RemoteModule {
public:
    // Loads a file uploaded to the session.
    static RemoteModule load(const std::shared_ptr<RpcSession>& session, const std::string& name);

    const std::vector<std::string>& function_names() const { return functions_; }
    // "graph" or "vm": which executor runs the model in this library.
    const std::string& executor_kind() const { return executor_kind_; }
    const RemoteHandle& handle() const { return handle_; }

    // Calls a kernel on remote tensors (they must outlive the call, which they do: it blocks).
    void call(const std::string& function, const std::vector<RemoteArg>& args) const;
    // TVM's time_evaluator (session_handler.h): seconds per call, one entry per repeat.
    std::vector<double> time_evaluator(const std::string& function,
                                       const std::vector<RemoteArg>& args, int number, int repeat,
                                       double min_repeat_ms) const;

private:
    RemoteHandle handle_;
    std::vector<std::string> functions_;
    std::string executor_kind_;
};

struct RemoteTensorInfo {
    std::string name;
    std::vector<int64_t> shape;  // empty for a VM input (shapes are given per run)
    DLDataType dtype{};
};

// A model's executor on the remote device: the graph executor or the VM, whichever the library
// was compiled for.
class RemoteGraphExecutor {
public:
    static RemoteGraphExecutor create(const RemoteModule& module);

    bool is_vm() const { return vm_; }
    const std::vector<RemoteTensorInfo>& inputs() const { return inputs_; }
    const std::vector<std::string>& output_names() const { return output_names_; }

    // Runs on local inputs and returns the outputs, in one round trip (inputs and outputs travel
    // with the request and its reply).
    std::vector<runtime::NDArray> run_with(const std::vector<runtime::NDArray>& inputs) const;
    // Graph executor only: TVM's set_input / run / get_output on remote tensors.
    void set_input(int index, const RemoteTensor& value) const;
    void set_input(const std::string& name, const RemoteTensor& value) const;
    void run() const;
    RemoteTensor get_output(int index) const;
    // Times run() on the device on the inputs last given (TVM's
    // module.time_evaluator("run", dev, number, repeat, min_repeat_ms)).
    std::vector<double> time_evaluator(int number, int repeat, double min_repeat_ms) const;
    // `anvil run --profile`'s per-kernel table, of number * repeat runs on the device.
    std::string profile(int number, int repeat) const;

private:
    RemoteHandle handle_;
    bool vm_ = false;
    std::vector<RemoteTensorInfo> inputs_;
    std::vector<std::string> output_names_;
};

}  // namespace anvil::rpc
