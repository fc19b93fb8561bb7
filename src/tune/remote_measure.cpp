#include "tune/remote_measure.h"

#include <chrono>

#include "runtime/npz.h"
#include "runtime/rpc/client.h"
#include "runtime/rpc/zmq_socket.h"
#include "support/error.h"

namespace anvil::tune {

int count_remote_devices(const RemoteDevices& devices) {
    auto [host, port] = rpc::parse_host_port(devices.tracker, "--tracker");
    rpc::TrackerClient tracker(host, port, devices.auth_key);
    int n = 0;
    rpc::Json status = tracker.status();
    for (const rpc::Json& d : status["devices"]) {
        if (d.value("device_key", "") == devices.device_key)
            n += std::max(1, d.value("max_sessions", 1));
    }
    if (n == 0) {
        // The tracker's own message names the keys it has.
        tracker.request(devices.device_key, 1, 1);
        user_error() << "the tracker at " << devices.tracker << " lists no device of key '"
                     << devices.device_key << "'";
    }
    return n;
}

RemoteMeasurer::RemoteMeasurer(RemoteDevices devices) : devices_(std::move(devices)) {}
RemoteMeasurer::~RemoteMeasurer() = default;

MeasureResult RemoteMeasurer::measure(const MeasureRequest& request, const MeasureOption& option) {
    if (option.flush_cache) {
        user_error() << "--flush-cache: cache flushing is not available with remote devices "
                        "(--tracker)";
    }
    auto start = std::chrono::steady_clock::now();
    MeasureResult result;
    try {
        if (!session_) {
            auto [host, port] = rpc::parse_host_port(devices_.tracker, "--tracker");
            session_ =
                rpc::TrackerClient(host, port, devices_.auth_key).request(devices_.device_key);
            threads_set_ = -1;
        }
        if (option.threads != threads_set_) {
            rpc::Message m;
            m.header = {{"op", "set_num_threads"}, {"threads", option.threads}};
            session_->request(std::move(m));
            threads_set_ = option.threads;
        }
        std::string name = "candidate_" + std::to_string(uploads_++) + ".so";
        session_->upload(request.library, name);
        {
            rpc::RemoteModule lib = rpc::RemoteModule::load(session_, name);
            auto inputs = runtime::read_npz(request.inputs_npz);
            std::vector<rpc::RemoteTensor> tensors;
            std::vector<rpc::RemoteArg> args;
            for (const KernelArg& a : request.args) {
                if (a.output) {
                    tensors.push_back(rpc::RemoteTensor::empty(session_, a.shape, a.dtype));
                } else {
                    auto it = std::find_if(inputs.begin(), inputs.end(),
                                           [&](const auto& p) { return p.first == a.name; });
                    if (it == inputs.end()) {
                        user_error() << "the inputs file has no '" << a.name << "'";
                    }
                    tensors.push_back(rpc::RemoteTensor::from(session_, it->second));
                }
                args.push_back(rpc::RemoteArg::tensor(tensors.back()));
            }
            rpc::Message call;
            call.header = {{"op", "call"},
                           {"module", lib.handle().id()},
                           {"function", request.function},
                           {"args", rpc::Json::array()}};
            for (const auto& a : args) call.header["args"].push_back(a.value);
            session_->request(call, option.timeout_s);
            std::vector<std::pair<std::string, runtime::NDArray>> outputs;
            for (size_t i = 0; i < request.args.size(); ++i) {
                if (request.args[i].output) {
                    outputs.emplace_back(request.args[i].name, tensors[i].to_local());
                }
            }
            if (!request.outputs_npz.empty()) runtime::write_npz(request.outputs_npz, outputs);
            rpc::Message timing;
            timing.header = call.header;
            timing.header["op"] = "time_evaluator";
            timing.header["number"] = option.number;
            timing.header["repeat"] = option.repeat;
            timing.header["min_repeat_ms"] = option.min_repeat_ms;
            rpc::Message reply = session_->request(timing, option.timeout_s);
            result.costs = reply.header.at("times_s").get<std::vector<double>>();
        }
        rpc::Message remove;
        remove.header = {{"op", "delete"}, {"name", name}};
        session_->request(std::move(remove));
    } catch (const Error& e) {
        std::string message = e.what();
        result.error = message.find("ran past its time limit") != std::string::npos
                           ? MeasureError::timeout
                           : MeasureError::runtime;
        result.message = message;
        result.costs.clear();
        // The session may be gone (a crash, a timeout, a lost connection): start afresh.
        session_.reset();
    }
    result.elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
}

}  // namespace anvil::tune
