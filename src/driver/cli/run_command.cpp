// anvil run model.so [--inputs DIR_OR_NPZ] [--outputs out.npz] [--compare DIR] [--repeat N]
//           [--number K] [--threads T] [--print-time] [--profile] [--print-top K]
//           [--rpc HOST:PORT | --tracker HOST:PORT --device-key K] [--auth-key KEY]
//
// The model may be for the graph executor or the VM (anvil compile --executor); both run the same.
// Inputs come from an ONNX test_data_set directory (input_K.pb, by position) or an .npz (by
// input name, else by position). --compare checks every output against the directory's
// output_K.pb with rtol 1e-3, atol 1e-4 and fails (exit 1) on a mismatch. --print-time and
// --profile time `repeat` x `number` runs after one warm-up run; --profile times every kernel call
// in them and prints the per-kernel table (runtime/kernel_profile.h; on the VM a kernel
// specialized for bucket sizes has a line of its own).
//
// With --rpc the model runs on a remote device (runtime/rpc): the library is uploaded to the RPC
// server there, each run sends the inputs and brings the outputs back in one round trip, and
// --print-time / --profile time the runs on the device (TVM's time_evaluator), so the times
// exclude the network. With --tracker and --device-key the tracker gives the next free device of
// that key (waiting in its queue). --auth-key defaults to $ANVIL_RPC_KEY.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>

#include "commands.h"
#include "driver/compare.h"
#include "run_values.h"
#include "runtime/graph_executor.h"
#include "runtime/rpc/auth_key.h"
#include "runtime/rpc/client.h"
#include "runtime/rpc/zmq_socket.h"
#include "runtime/vm.h"
#include "support/error.h"

namespace anvil::cli {

namespace {

struct RunArgs {
    std::string model;
    std::string inputs;
    std::string outputs;
    std::string compare;
    int repeat = 1;
    int number = 1;
    int threads = 0;
    bool print_time = false;
    bool profile = false;
    int print_top = 0;
    std::string labels;   // one class name per line, for --print-top
    std::string rpc;      // HOST:PORT of an RPC server to run on
    std::string tracker;  // or of a tracker to ask for a device of device_key
    std::string device_key;
    std::string auth_key;
};

// What `run` needs of an executor; the graph executor and the VM each provide it.
class Executor {
public:
    virtual ~Executor() = default;
    virtual int num_inputs() const = 0;
    virtual std::string input_name(int i) const = 0;
    virtual DLDataType input_dtype(int i) const = 0;
    // Whether input `i` is a sequence, an optional; only the VM takes those.
    virtual runtime::VMInputInfo input_info(int i) const { return {input_name(i), input_dtype(i)}; }
    // A zero input of the declared shape, or a UserError when the shape is symbolic.
    virtual runtime::NDArray zero_input(int i) const = 0;
    virtual std::vector<std::string> output_names() const = 0;
    virtual void set_inputs(const std::vector<runtime::VMValue>& inputs) = 0;
    // Runs on the inputs last set; the timed loop calls only this.
    virtual void run() = 0;
    // Runs as run() does, timing every kernel call (runtime/kernel_profile.h).
    virtual void run_profiled() = 0;
    virtual std::string profile_report() const = 0;
    // Milliseconds per run, one entry per measurement: `repeat` measurements of `number` runs
    // after the warm-up run made before; with `profile`, every kernel call is timed too.
    virtual std::vector<double> time_runs(int repeat, int number, bool profile) {
        std::vector<double> ms;
        for (int r = 0; r < repeat; ++r) {
            auto start = std::chrono::steady_clock::now();
            for (int n = 0; n < number; ++n) profile ? run_profiled() : run();
            ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count() /
                number);
        }
        return ms;
    }
    // One per output: a tensor, or on the VM also a sequence (a tuple) or none.
    virtual std::vector<runtime::VMValue> outputs() const = 0;
};

class GraphRunner : public Executor {
public:
    explicit GraphRunner(const std::string& path) : ex_(runtime::GraphExecutor::load(path)) {}
    int num_inputs() const override { return ex_.num_inputs(); }
    std::string input_name(int i) const override { return ex_.input_info(i).name; }
    DLDataType input_dtype(int i) const override { return ex_.input_info(i).dtype; }
    runtime::NDArray zero_input(int i) const override {
        const auto& info = ex_.input_info(i);
        runtime::NDArray t = runtime::NDArray::empty(info.shape, info.dtype);
        std::memset(t.raw_data(), 0, t.nbytes());
        return t;
    }
    std::vector<std::string> output_names() const override {
        std::vector<std::string> names;
        for (int i = 0; i < ex_.num_outputs(); ++i) names.push_back(ex_.output_info(i).name);
        return names;
    }
    void set_inputs(const std::vector<runtime::VMValue>& inputs) override {
        for (int i = 0; i < ex_.num_inputs(); ++i) ex_.set_input(i, inputs[i].tensor);
    }
    void run() override { ex_.run(); }
    void run_profiled() override { ex_.run_profiled(); }
    std::string profile_report() const override { return runtime::format_profile(ex_.profile()); }
    std::vector<runtime::VMValue> outputs() const override {
        std::vector<runtime::VMValue> out;
        for (int i = 0; i < ex_.num_outputs(); ++i) out.emplace_back(ex_.get_output(i));
        return out;
    }

private:
    runtime::GraphExecutor ex_;
};

class VMRunner : public Executor {
public:
    explicit VMRunner(const std::string& path) : vm_(runtime::VirtualMachine::load(path)) {}
    int num_inputs() const override { return static_cast<int>(vm_.input_names().size()); }
    std::string input_name(int i) const override { return vm_.input_names()[i]; }
    DLDataType input_dtype(int i) const override { return vm_.input_dtype(i); }
    runtime::VMInputInfo input_info(int i) const override { return vm_.input_info(i); }
    runtime::NDArray zero_input(int i) const override {
        user_error() << "the model runs on the VM and its input '" << input_name(i)
                     << "' may have a symbolic shape; give the inputs with --inputs";
        ANVIL_UNREACHABLE();
    }
    std::vector<std::string> output_names() const override { return vm_.output_names(); }
    void set_inputs(const std::vector<runtime::VMValue>& inputs) override { inputs_ = inputs; }
    void run() override { outputs_ = vm_.run_values(inputs_); }
    void run_profiled() override {
        vm_.set_profiling(true);
        run();
        vm_.set_profiling(false);
    }
    std::string profile_report() const override { return runtime::format_profile(vm_.profile()); }
    std::vector<runtime::VMValue> outputs() const override { return outputs_; }

private:
    runtime::VirtualMachine vm_;
    std::vector<runtime::VMValue> inputs_, outputs_;
};

// The model on an RPC server: the graph executor or the VM there, whichever the library needs.
class RemoteRunner : public Executor {
public:
    RemoteRunner(const std::string& path, const RunArgs& a) {
        std::string key = rpc::resolve_auth_key(a.auth_key);
        std::shared_ptr<rpc::RpcSession> session;
        if (!a.tracker.empty()) {
            auto [host, port] = rpc::parse_host_port(a.tracker, "--tracker");
            session = rpc::TrackerClient(host, port, key).request(a.device_key);
        } else {
            auto [host, port] = rpc::parse_host_port(a.rpc, "--rpc");
            session = rpc::RpcSession::connect(host, port, key);
        }
        int threads = a.threads;
        if (threads > 0) {
            rpc::Message m;
            m.header = {{"op", "set_num_threads"}, {"threads", threads}};
            session->request(std::move(m));
        }
        std::string name = std::filesystem::path(path).filename().string();
        if (!std::filesystem::is_regular_file(path))
            user_error() << "no model file '" << path << "'";
        session->upload(path, name);
        ex_ = rpc::RemoteGraphExecutor::create(rpc::RemoteModule::load(session, name));
    }
    int num_inputs() const override { return static_cast<int>(ex_.inputs().size()); }
    std::string input_name(int i) const override { return ex_.inputs()[i].name; }
    DLDataType input_dtype(int i) const override { return ex_.inputs()[i].dtype; }
    runtime::NDArray zero_input(int i) const override {
        if (ex_.is_vm()) {
            user_error() << "the model runs on the VM and its input '" << input_name(i)
                         << "' may have a symbolic shape; give the inputs with --inputs";
        }
        runtime::NDArray t = runtime::NDArray::empty(ex_.inputs()[i].shape, ex_.inputs()[i].dtype);
        std::memset(t.raw_data(), 0, t.nbytes());
        return t;
    }
    std::vector<std::string> output_names() const override { return ex_.output_names(); }
    void set_inputs(const std::vector<runtime::VMValue>& inputs) override {
        inputs_.clear();
        for (size_t i = 0; i < inputs.size(); ++i) {
            if (inputs[i].kind != runtime::VMValue::Kind::tensor) {
                user_error() << "--rpc: input " << i << " '" << input_name(static_cast<int>(i))
                             << "' is a sequence or none; over RPC models take tensors only";
            }
            inputs_.push_back(inputs[i].tensor);
        }
    }
    void run() override { outputs_ = ex_.run_with(inputs_); }
    void run_profiled() override { run(); }
    std::vector<double> time_runs(int repeat, int number, bool profile) override {
        if (profile) report_ = ex_.profile(number, repeat);
        std::vector<double> ms;
        for (double s : ex_.time_evaluator(number, repeat, 0)) ms.push_back(s * 1e3);
        return ms;
    }
    std::string profile_report() const override { return report_; }
    std::vector<runtime::VMValue> outputs() const override {
        return {outputs_.begin(), outputs_.end()};
    }

private:
    rpc::RemoteGraphExecutor ex_;
    std::vector<runtime::NDArray> inputs_, outputs_;
    std::string report_;
};

std::vector<runtime::VMValue> read_inputs(const std::string& source, const Executor& ex) {
    std::vector<runtime::VMValue> values;
    if (source.empty()) {
        std::fprintf(stderr, "note: no --inputs; running on zeros\n");
        for (int i = 0; i < ex.num_inputs(); ++i) values.emplace_back(ex.zero_input(i));
        return values;
    }
    std::vector<runtime::VMInputInfo> inputs;
    for (int i = 0; i < ex.num_inputs(); ++i) inputs.push_back(ex.input_info(i));
    return read_input_values(source, inputs);
}

int run_model(const RunArgs& a) {
    bool remote = !a.rpc.empty() || !a.tracker.empty();
    if (!a.rpc.empty() && !a.tracker.empty()) user_error() << "give --rpc or --tracker, not both";
    if (a.tracker.empty() != a.device_key.empty()) {
        user_error() << "--tracker and --device-key go together";
    }
    if (a.threads > 0 && !remote) anvil_set_num_threads(a.threads);
    std::unique_ptr<Executor> ex;
    if (remote) {
        ex = std::make_unique<RemoteRunner>(a.model, a);
    } else if (runtime::VirtualMachine::is_vm_artifact(a.model)) {
        ex = std::make_unique<VMRunner>(a.model);
    } else {
        ex = std::make_unique<GraphRunner>(a.model);
    }
    std::vector<runtime::VMValue> inputs = read_inputs(a.inputs, *ex);
    ex->set_inputs(inputs);
    ex->run();
    std::vector<runtime::VMValue> outputs = ex->outputs();

    if (a.print_top > 0) {
        if (outputs.empty() || outputs[0].kind != runtime::VMValue::Kind::tensor) {
            user_error() << "--print-top: output 0 is not a tensor";
        }
        std::vector<double> v = driver::to_doubles(outputs[0].tensor);
        std::vector<size_t> idx(v.size());
        std::iota(idx.begin(), idx.end(), 0);
        size_t k = std::min<size_t>(a.print_top, v.size());
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                          [&](size_t x, size_t y) { return v[x] > v[y]; });
        std::vector<std::string> names;
        if (!a.labels.empty()) {
            std::ifstream in(a.labels);
            if (!in) user_error() << "--labels: cannot open '" << a.labels << "'";
            for (std::string line; std::getline(in, line);) names.push_back(line);
        }
        std::printf("top-%zu of output 0:", k);
        if (!names.empty()) std::printf("\n");
        for (size_t i = 0; i < k; ++i) {
            if (idx[i] < names.size()) {
                std::printf("  %5zu  %-30s %.4g\n", idx[i], names[idx[i]].c_str(), v[idx[i]]);
            } else {
                std::printf(" %zu (%.4g)", idx[i], v[idx[i]]);
            }
        }
        if (names.empty()) std::printf("\n");
    }
    if (!a.outputs.empty()) write_output_values(a.outputs, ex->output_names(), outputs);
    int status = 0;
    if (!a.compare.empty() && !compare_output_values(a.compare, outputs)) status = 1;
    bool profile = a.profile;
    if (a.print_time || profile) {
        std::vector<double> ms = ex->time_runs(a.repeat, a.number, profile);
        std::vector<double> sorted = ms;
        std::sort(sorted.begin(), sorted.end());
        double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size();
        double var = 0;
        for (double t : ms) var += (t - mean) * (t - mean);
        double median = sorted.size() % 2
                            ? sorted[sorted.size() / 2]
                            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
        if (a.print_time) {
            std::printf("time_ms median=%.3f mean=%.3f min=%.3f max=%.3f std=%.3f runs=%zu\n",
                        median, mean, sorted.front(), sorted.back(), std::sqrt(var / ms.size()),
                        ms.size());
        }
        if (profile) std::printf("%s", ex->profile_report().c_str());
    }
    return status;
}

}  // namespace

void add_run_command(CLI::App& app, int* status) {
    auto args = std::make_shared<RunArgs>();
    CLI::App* cmd = app.add_subcommand("run", "run a compiled model");
    cmd->add_option("model", args->model, "the compiled model (.so)")->required();
    cmd->add_option("--inputs", args->inputs, "a test_data_set directory or an .npz");
    cmd->add_option("--outputs", args->outputs, "write the outputs to this .npz");
    cmd->add_option("--compare", args->compare, "compare with DIR/output_K.pb");
    cmd->add_option("--repeat", args->repeat, "timed measurements")->check(CLI::PositiveNumber);
    cmd->add_option("--number", args->number, "runs per measurement")->check(CLI::PositiveNumber);
    cmd->add_option("--threads", args->threads,
                    "worker threads, on the RPC server with --rpc (default: ANVIL_NUM_THREADS or "
                    "cores)");
    cmd->add_flag("--print-time", args->print_time, "print run-time statistics");
    cmd->add_flag("--profile", args->profile,
                  "time every kernel in the timed runs and print a per-kernel table (time, share, "
                  "GFLOP/s)");
    cmd->add_option("--print-top", args->print_top, "print the top K entries of output 0");
    cmd->add_option("--labels", args->labels, "class names, one per line, for --print-top");
    cmd->add_option("--rpc", args->rpc, "run on the RPC server at HOST:PORT (anvil rpc server)");
    cmd->add_option("--tracker", args->tracker,
                    "run on a device from the tracker at HOST:PORT (with --device-key)");
    cmd->add_option("--device-key", args->device_key, "the kind of device to ask the tracker for");
    cmd->add_option("--auth-key", args->auth_key,
                    "the RPC server's or tracker's auth key (default: $ANVIL_RPC_KEY)");
    cmd->callback([args, status] { *status = run_model(*args); });
}

}  // namespace anvil::cli
