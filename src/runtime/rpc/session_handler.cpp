#include "runtime/rpc/session_handler.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <variant>

#include "runtime/graph_executor.h"
#include "runtime/kernel_profile.h"
#include "runtime/module.h"
#include "runtime/ndarray.h"
#include "runtime/rpc/frame_stream.h"
#include "runtime/vm.h"
#include "support/error.h"

namespace anvil::rpc {

namespace {

struct LoadedModule {
    std::filesystem::path path;
    runtime::Module module;
};

struct VMState {
    explicit VMState(runtime::VirtualMachine m) : vm(std::move(m)) {}
    runtime::VirtualMachine vm;
    std::vector<runtime::NDArray> last_inputs;  // what time_evaluator and profile run on
    bool has_run = false;
};

using Handle = std::variant<LoadedModule, runtime::NDArray, std::shared_ptr<runtime::GraphExecutor>,
                            std::shared_ptr<VMState>>;

// Upload names are plain file names in the session's directory.
void check_file_name(const std::string& name) {
    bool ok = !name.empty() && name.size() <= 200 && name[0] != '.';
    for (char c : name) {
        ok =
            ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
    }
    if (!ok) {
        user_error() << "upload: '" << name
                     << "' is not a plain file name (letters, digits, '.', '_', '-'; not starting "
                        "with '.'; at most 200 characters)";
    }
}

Json tensor_info(const std::string& name, std::span<const int64_t> shape, DLDataType dtype) {
    Json info = {{"shape", std::vector<int64_t>(shape.begin(), shape.end())},
                 {"dtype", runtime::dl_dtype_to_string(dtype)}};
    if (!name.empty()) info["name"] = name;
    return info;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// TVM's time_evaluator over `call` (see session_handler.h).
std::vector<double> time_calls(const std::function<void()>& call, int64_t number, int64_t repeat,
                               double min_repeat_ms) {
    call();  // warm-up: first-touch of buffers, lazy initialisation
    std::vector<double> times;
    for (int64_t r = 0; r < repeat; ++r) {
        for (;;) {
            auto start = std::chrono::steady_clock::now();
            for (int64_t i = 0; i < number; ++i) call();
            double elapsed = seconds_since(start);
            if (elapsed * 1e3 >= min_repeat_ms || number >= (int64_t{1} << 30)) {
                times.push_back(elapsed / static_cast<double>(number));
                break;
            }
            // Aim past min_repeat_ms in one more try, as TVM does.
            double scale = elapsed > 0 ? min_repeat_ms / (elapsed * 1e3) * 1.618 : 2.0;
            number = std::max(number + 1, static_cast<int64_t>(std::ceil(number * scale)));
        }
    }
    return times;
}

// The arguments of a `call`, in the C calling convention; holds what they point at.
struct CallArgs {
    std::vector<AnvilValue> values;
    std::vector<int> codes;
    std::vector<std::string> strings;
    std::vector<runtime::NDArray> tensors;
};

}  // namespace

struct SessionHandler::State {
    SessionConfig config;
    std::map<int64_t, Handle> handles;
    int64_t next_handle = 1;
    std::map<std::string, int64_t> upload_sizes;

    int64_t add(Handle h) {
        handles.emplace(next_handle, std::move(h));
        return next_handle++;
    }

    template <typename T>
    T& get(const Json& header, const char* key, const char* what) {
        int64_t id = header_int(header, key);
        auto it = handles.find(id);
        if (it == handles.end()) {
            user_error() << header_op(header) << ": no handle " << id << " in this session";
        }
        T* value = std::get_if<T>(&it->second);
        if (value == nullptr) {
            user_error() << header_op(header) << ": handle " << id << " is not " << what;
        }
        return *value;
    }
    LoadedModule& module(const Json& h) { return get<LoadedModule>(h, "module", "a module"); }
    runtime::NDArray& tensor(const Json& h, const char* key = "tensor") {
        return get<runtime::NDArray>(h, key, "a tensor");
    }

    runtime::NDArray new_tensor(const Json& h) {
        std::vector<int64_t> shape = header_int_list(h, "shape");
        DLDataType dtype = runtime::dl_dtype_from_string(header_string(h, "dtype"));
        int64_t bytes = runtime::dl_dtype_bytes(dtype);
        for (int64_t d : shape) {
            if (d < 0) user_error() << header_op(h) << ": negative dimension " << d;
            if (d > 0 && bytes > config.max_tensor_bytes / d) {
                user_error() << header_op(h) << ": a tensor over the session's limit of "
                             << config.max_tensor_bytes << " bytes";
            }
            bytes *= d;
        }
        return runtime::NDArray::empty(shape, dtype);
    }

    static void fill(const runtime::NDArray& t, const std::string& blob) {
        if (blob.size() != t.nbytes()) {
            user_error() << "the data has " << blob.size() << " bytes; the tensor " << t.str()
                         << " takes " << t.nbytes();
        }
        t.copy_from(blob.data(), blob.size());
    }

    static const std::string& only_blob(const Message& m) {
        if (m.blobs.size() != 1) {
            user_error() << header_op(m.header) << ": expected one blob of data, got "
                         << m.blobs.size();
        }
        return m.blobs[0];
    }

    static std::string bytes_of(const runtime::NDArray& t) {
        std::string data(t.nbytes(), '\0');
        t.copy_to(data.data(), data.size());
        return data;
    }

    std::vector<runtime::NDArray> inputs_from(const Message& m, size_t count) {
        const Json& shapes = header_array(m.header, "shapes");
        const Json& dtypes = header_array(m.header, "dtypes");
        if (m.blobs.size() != count || shapes.size() != count || dtypes.size() != count) {
            user_error() << header_op(m.header) << ": the model takes " << count
                         << " inputs; the request gives " << m.blobs.size() << " blobs, "
                         << shapes.size() << " shapes and " << dtypes.size() << " dtypes";
        }
        std::vector<runtime::NDArray> inputs;
        for (size_t i = 0; i < count; ++i) {
            Json one = {{"op", header_op(m.header)}, {"shape", shapes[i]}, {"dtype", dtypes[i]}};
            runtime::NDArray t = new_tensor(one);
            fill(t, m.blobs[i]);
            inputs.push_back(t);
        }
        return inputs;
    }

    CallArgs call_args(const Json& h);
    Message upload(const Message& m);
    Message load_module(const Message& m);
    Message call(const Message& m);
    Message run_with(const Message& m);
    Message time_evaluator(const Message& m);
    Message profile(const Message& m);
    Message dispatch(const Message& m);
};

CallArgs SessionHandler::State::call_args(const Json& h) {
    const Json& list = header_array(h, "args");
    CallArgs args;
    args.strings.reserve(list.size());  // the values point into it
    for (const Json& a : list) {
        AnvilValue v{};
        int code = kAnvilNull;
        if (!a.is_object() || a.size() != 1) {
            user_error() << "call: an argument is not one of {\"tensor\": handle}, {\"int\": v}, "
                            "{\"float\": v}, {\"str\": s}";
        }
        if (a.contains("tensor")) {
            args.tensors.push_back(tensor(a));
            v.v_handle = args.tensors.back().tensor();
            code = kAnvilDLTensor;
        } else if (a.contains("int")) {
            v.v_int64 = header_int(a, "int");
            code = kAnvilInt;
        } else if (a.contains("float")) {
            v.v_float64 = header_number_or(a, "float", 0);
            code = kAnvilFloat;
        } else if (a.contains("str")) {
            args.strings.push_back(header_string(a, "str"));
            v.v_str = args.strings.back().c_str();
            code = kAnvilStr;
        } else {
            user_error() << "call: unknown argument kind '" << a.begin().key() << "'";
        }
        args.values.push_back(v);
        args.codes.push_back(code);
    }
    return args;
}

Message SessionHandler::State::upload(const Message& m) {
    std::string name = header_string(m.header, "name");
    check_file_name(name);
    int64_t offset = header_int(m.header, "offset");
    const std::string& chunk = only_blob(m);
    int64_t& size = upload_sizes[name];
    if (offset != 0 && offset != size) {
        user_error() << "upload '" << name << "': chunk at offset " << offset
                     << ", but the file has " << size
                     << " bytes (chunks continue at the end; offset 0 starts anew)";
    }
    int64_t others = 0;
    for (const auto& [n, bytes] : upload_sizes) others += n == name ? 0 : bytes;
    int64_t new_size = offset + static_cast<int64_t>(chunk.size());
    if (others + new_size > config.max_upload_bytes) {
        user_error() << "upload '" << name << "': the session's uploads would take "
                     << others + new_size << " bytes; the server allows "
                     << config.max_upload_bytes;
    }
    std::filesystem::path path = config.dir / name;
    std::ofstream out(
        path, offset == 0 ? std::ios::binary | std::ios::trunc : std::ios::binary | std::ios::app);
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    out.close();
    if (!out) user_error() << "upload '" << name << "': cannot write the file on the server";
    size = new_size;
    Message reply = make_reply(m);
    reply.header["size"] = size;
    return reply;
}

Message SessionHandler::State::load_module(const Message& m) {
    std::string name = header_string(m.header, "name");
    check_file_name(name);
    std::filesystem::path path = config.dir / name;
    if (!upload_sizes.contains(name) || !std::filesystem::exists(path)) {
        user_error() << "load_module: no file '" << name << "' was uploaded to this session";
    }
    runtime::Module module = runtime::load_module(path.string());
    Message reply = make_reply(m);
    reply.header["functions"] = module.function_names();
    reply.header["executor"] =
        runtime::VirtualMachine::is_vm_artifact(path.string()) ? "vm" : "graph";
    reply.header["module"] = add(LoadedModule{path, module});
    return reply;
}

Message SessionHandler::State::call(const Message& m) {
    LoadedModule& lib = module(m.header);
    std::string name = header_string(m.header, "function");
    runtime::PackedFunc f = lib.module.get_function(name);
    if (!f) user_error() << "call: the module has no function '" << name << "'";
    CallArgs args = call_args(m.header);
    runtime::RetValue ret =
        f.call(args.values.data(), args.codes.data(), static_cast<int>(args.values.size()));
    Message reply = make_reply(m);
    if (ret.type_code() == kAnvilInt) reply.header["ret"] = {{"int", ret.as_int()}};
    if (ret.type_code() == kAnvilFloat) reply.header["ret"] = {{"float", ret.as_float()}};
    return reply;
}

Message SessionHandler::State::run_with(const Message& m) {
    int64_t id = header_int(m.header, "executor");
    auto it = handles.find(id);
    std::vector<runtime::NDArray> outputs;
    std::vector<std::string> names;
    if (it != handles.end() && std::holds_alternative<std::shared_ptr<VMState>>(it->second)) {
        VMState& state = *std::get<std::shared_ptr<VMState>>(it->second);
        state.last_inputs = inputs_from(m, state.vm.input_names().size());
        outputs = state.vm.run(state.last_inputs);
        state.has_run = true;
    } else {
        auto& ex =
            get<std::shared_ptr<runtime::GraphExecutor>>(m.header, "executor", "an executor");
        std::vector<runtime::NDArray> inputs =
            inputs_from(m, static_cast<size_t>(ex->num_inputs()));
        // Through the executor's own inputs, so that time_evaluator and profile run on them too.
        for (size_t i = 0; i < inputs.size(); ++i) ex->set_input(static_cast<int>(i), inputs[i]);
        ex->run();
        for (int i = 0; i < ex->num_outputs(); ++i) outputs.push_back(ex->get_output(i));
    }
    Message reply = make_reply(m);
    reply.header["outputs"] = Json::array();
    for (const runtime::NDArray& t : outputs) {
        reply.header["outputs"].push_back(tensor_info("", t.shape(), t.dtype()));
        reply.blobs.push_back(bytes_of(t));
    }
    return reply;
}

Message SessionHandler::State::time_evaluator(const Message& m) {
    int64_t number = header_int_or(m.header, "number", 10);
    int64_t repeat = header_int_or(m.header, "repeat", 1);
    double min_repeat_ms = header_number_or(m.header, "min_repeat_ms", 0);
    if (number < 1 || repeat < 1 || repeat > 1000000 || !(min_repeat_ms >= 0)) {
        user_error() << "time_evaluator: number and repeat must be positive (repeat at most 10^6) "
                        "and min_repeat_ms not negative";
    }
    std::function<void()> run;
    CallArgs args;
    if (m.header.contains("executor")) {
        auto it = handles.find(header_int(m.header, "executor"));
        if (it != handles.end() && std::holds_alternative<std::shared_ptr<VMState>>(it->second)) {
            auto state = std::get<std::shared_ptr<VMState>>(it->second);
            if (!state->has_run) {
                user_error() << "time_evaluator: run the VM once (executor.run_with) to give it "
                                "inputs first";
            }
            run = [state] { state->vm.run(state->last_inputs); };
        } else {
            auto ex =
                get<std::shared_ptr<runtime::GraphExecutor>>(m.header, "executor", "an executor");
            run = [ex] { ex->run(); };
        }
    } else {
        LoadedModule& lib = module(m.header);
        std::string name = header_string(m.header, "function");
        runtime::PackedFunc f = lib.module.get_function(name);
        if (!f) user_error() << "time_evaluator: the module has no function '" << name << "'";
        args = call_args(m.header);
        run = [f, &args] {
            f.call(args.values.data(), args.codes.data(), static_cast<int>(args.values.size()));
        };
    }
    Message reply = make_reply(m);
    reply.header["times_s"] = time_calls(run, number, repeat, min_repeat_ms);
    return reply;
}

Message SessionHandler::State::profile(const Message& m) {
    int64_t runs = header_int_or(m.header, "number", 1) * header_int_or(m.header, "repeat", 1);
    if (runs < 1) user_error() << "executor.profile: number and repeat must be positive";
    auto it = handles.find(header_int(m.header, "executor"));
    std::string report;
    if (it != handles.end() && std::holds_alternative<std::shared_ptr<VMState>>(it->second)) {
        VMState& state = *std::get<std::shared_ptr<VMState>>(it->second);
        if (!state.has_run) user_error() << "executor.profile: run the VM once first";
        state.vm.reset_profile();
        state.vm.set_profiling(true);
        for (int64_t i = 0; i < runs; ++i) state.vm.run(state.last_inputs);
        state.vm.set_profiling(false);
        report = runtime::format_profile(state.vm.profile());
    } else {
        auto& ex =
            get<std::shared_ptr<runtime::GraphExecutor>>(m.header, "executor", "an executor");
        ex->reset_profile();
        for (int64_t i = 0; i < runs; ++i) ex->run_profiled();
        report = runtime::format_profile(ex->profile());
    }
    Message reply = make_reply(m);
    reply.header["report"] = report;
    return reply;
}

Message SessionHandler::State::dispatch(const Message& m) {
    const Json& h = m.header;
    std::string op = header_op(h);
    if (op == "upload") return upload(m);
    if (op == "load_module") return load_module(m);
    if (op == "call") return call(m);
    if (op == "executor.run_with") return run_with(m);
    if (op == "time_evaluator") return time_evaluator(m);
    if (op == "executor.profile") return profile(m);
    Message reply = make_reply(m);
    if (op == "session.info") {
        struct utsname names {};
        uname(&names);
        reply.header["pid"] = static_cast<int64_t>(getpid());
        reply.header["machine"] = names.machine;
        reply.header["threads"] = anvil_num_threads();
    } else if (op == "set_num_threads") {
        int64_t n = header_int(h, "threads");
        if (n < 0 || n > 4096) user_error() << "set_num_threads: " << n << " is out of range";
        anvil_set_num_threads(static_cast<int>(n));
    } else if (op == "tensor.empty") {
        reply.header["tensor"] = add(new_tensor(h));
    } else if (op == "tensor.from_bytes") {
        runtime::NDArray t = new_tensor(h);
        fill(t, only_blob(m));
        reply.header["tensor"] = add(t);
    } else if (op == "tensor.copy_from") {
        fill(tensor(h), only_blob(m));
    } else if (op == "tensor.copy_to") {
        runtime::NDArray& t = tensor(h);
        reply.header.update(tensor_info("", t.shape(), t.dtype()));
        reply.blobs.push_back(bytes_of(t));
    } else if (op == "delete") {
        std::string name = header_string(h, "name");
        check_file_name(name);
        std::error_code ignored;
        std::filesystem::remove(config.dir / name, ignored);
        upload_sizes.erase(name);  // a module loaded from it stays loaded until freed
    } else if (op == "free") {
        handles.erase(header_int(h, "handle"));  // freeing twice is harmless
    } else if (op == "graph_executor.create") {
        auto ex = std::make_shared<runtime::GraphExecutor>(
            runtime::GraphExecutor::load(module(h).path.string()));
        reply.header["inputs"] = Json::array();
        reply.header["outputs"] = Json::array();
        for (int i = 0; i < ex->num_inputs(); ++i) {
            const auto& info = ex->input_info(i);
            reply.header["inputs"].push_back(tensor_info(info.name, info.shape, info.dtype));
        }
        for (int i = 0; i < ex->num_outputs(); ++i) {
            const auto& info = ex->output_info(i);
            reply.header["outputs"].push_back(tensor_info(info.name, info.shape, info.dtype));
        }
        reply.header["executor"] = add(ex);
    } else if (op == "vm.create") {
        auto state =
            std::make_shared<VMState>(runtime::VirtualMachine::load(module(h).path.string()));
        reply.header["inputs"] = Json::array();
        for (size_t i = 0; i < state->vm.input_names().size(); ++i) {
            reply.header["inputs"].push_back(
                {{"name", state->vm.input_names()[i]},
                 {"dtype",
                  runtime::dl_dtype_to_string(state->vm.input_dtype(static_cast<int>(i)))}});
        }
        reply.header["outputs"] = state->vm.output_names();
        reply.header["executor"] = add(state);
    } else if (op == "graph_executor.set_input") {
        auto& ex = get<std::shared_ptr<runtime::GraphExecutor>>(h, "executor", "a graph executor");
        int index = h.contains("name") ? ex->input_index(header_string(h, "name"))
                                       : static_cast<int>(header_int(h, "index"));
        if (index < 0 || index >= ex->num_inputs()) {
            user_error() << op << ": input " << index << " is out of range (the model has "
                         << ex->num_inputs() << ")";
        }
        ex->set_input(index, tensor(h));
    } else if (op == "graph_executor.run") {
        get<std::shared_ptr<runtime::GraphExecutor>>(h, "executor", "a graph executor")->run();
    } else if (op == "graph_executor.get_output") {
        auto& ex = get<std::shared_ptr<runtime::GraphExecutor>>(h, "executor", "a graph executor");
        int64_t index = header_int(h, "index");
        if (index < 0 || index >= ex->num_outputs()) {
            user_error() << op << ": output " << index << " is out of range (the model has "
                         << ex->num_outputs() << ")";
        }
        runtime::NDArray t = ex->get_output(static_cast<int>(index));
        reply.header.update(tensor_info("", t.shape(), t.dtype()));
        reply.header["tensor"] = add(t);
    } else {
        user_error() << "unknown request '" << op << "'";
    }
    return reply;
}

SessionHandler::SessionHandler(SessionConfig config) : state_(std::make_unique<State>()) {
    state_->config = std::move(config);
}

SessionHandler::~SessionHandler() = default;

Message SessionHandler::handle(const Message& request) {
    Json id = request.header.contains("id") ? request.header["id"] : Json();
    try {
        return state_->dispatch(request);
    } catch (const Error& e) {
        return make_error_reply(id, e.what());  // an InternalError's says so itself
    } catch (const std::exception& e) {
        return make_error_reply(id, std::string("unexpected error: ") + e.what());
    } catch (...) {
        return make_error_reply(id, "unexpected error of unknown type");
    }
}

void run_session_process(int fd, const SessionConfig& config) {
    SessionHandler handler(config);
    MessageLimits limits{.max_header_bytes = int64_t{1} << 30,
                         .max_blob_bytes = int64_t{1} << 62,
                         .max_blobs = 1 << 20};
    std::vector<std::string> frames;
    for (;;) {
        Message reply;
        try {
            // The server checked the client's message against its limits before passing it on.
            if (!read_frames(fd, &frames, limits.max_blobs, limits.max_blob_bytes)) break;
            reply = handler.handle(parse_frames(std::move(frames), limits));
        } catch (const std::exception& e) {
            reply = make_error_reply(Json(), e.what());
        }
        try {
            write_frames(fd, message_frames(reply));
        } catch (const std::exception&) {
            break;
        }
    }
    // No destructors, no atexit handlers: they belong to the server process this one was forked
    // from (its ZeroMQ context above all).
    _exit(0);
}

}  // namespace anvil::rpc
