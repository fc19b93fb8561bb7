// libanvil_runtime_dnnl.so: the module oneDNN's regions run in. At load it reads the regions
// dnnl_codegen.cpp wrote (dnnl_format.h) and creates every primitive once: weights reordered to
// the layouts the primitives chose, intermediate values allocated in those layouts, reorders
// inserted where a value is read in another layout. A call binds the caller's tensors to the
// region's inputs and outputs (plain NCHW / row-major) and executes the steps in order.
#include <cstring>
#include <dnnl.hpp>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "anvil/runtime.h"
#include "codegen/external/dnnl/dnnl_format.h"
#include "runtime/last_error.h"
#include "runtime/module.h"
#include "support/error.h"

namespace anvil::codegen::dnnl {

namespace {

using nlohmann::json;
using tag = ::dnnl::memory::format_tag;
using dt = ::dnnl::memory::data_type;
using ::dnnl::memory;

memory::desc plain(const memory::dims& dims) {
    memory::dims strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
    return memory::desc(dims, dt::f32, strides);
}

memory::desc any(const memory::dims& dims) {
    return memory::desc(dims, dt::f32, tag::any);
}

::dnnl::algorithm eltwise_alg(const std::string& name) {
    using A = ::dnnl::algorithm;
    static const std::map<std::string, A> kAlgs = {{"relu", A::eltwise_relu},
                                                   {"clip", A::eltwise_clip_v2},
                                                   {"gelu_erf", A::eltwise_gelu_erf},
                                                   {"gelu_tanh", A::eltwise_gelu_tanh},
                                                   {"logistic", A::eltwise_logistic},
                                                   {"tanh", A::eltwise_tanh},
                                                   {"exp", A::eltwise_exp},
                                                   {"log", A::eltwise_log},
                                                   {"sqrt", A::eltwise_sqrt},
                                                   {"abs", A::eltwise_abs},
                                                   {"elu", A::eltwise_elu}};
    auto it = kAlgs.find(name);
    if (it == kAlgs.end()) user_error() << "unknown eltwise algorithm '" << name << "'";
    return it->second;
}

// One region: its primitives and memories, created once.
class DnnlFunction {
public:
    DnnlFunction(const json& fn, const char* weights, const ::dnnl::engine& engine)
        : engine_(engine), stream_(engine), weights_(weights) {
        symbol_ = fn.at("symbol").get<std::string>();
        for (const auto& s : fn.at("values")) shapes_.push_back(s.get<memory::dims>());
        canonical_.resize(shapes_.size());
        user_arg_.assign(shapes_.size(), -1);
        constant_.assign(shapes_.size(), nullptr);
        inputs_ = fn.at("inputs").get<std::vector<int>>();
        outputs_ = fn.at("outputs").get<std::vector<int>>();
        for (size_t i = 0; i < inputs_.size(); ++i) user_arg_.at(inputs_[i]) = static_cast<int>(i);
        for (size_t i = 0; i < outputs_.size(); ++i) {
            user_arg_.at(outputs_[i]) = static_cast<int>(inputs_.size() + i);
        }
        for (int v : inputs_) canonical_[v] = user_memory(plain(shapes_[v]), user_arg_[v]);
        for (int v : outputs_) canonical_[v] = user_memory(plain(shapes_[v]), user_arg_[v]);
        for (const auto& c : fn.at("constants")) {
            int v = c.at("value").get<int>();
            constant_.at(v) = weights_ + c.at("offset").get<size_t>();
            canonical_[v] = memory(plain(shapes_[v]), engine_, const_cast<char*>(constant_[v]));
        }
        for (const auto& step : fn.at("steps")) add_step(step);
    }

    const std::string& symbol() const { return symbol_; }

    void run(const runtime::Args& args) {
        size_t n = inputs_.size() + outputs_.size();
        if (static_cast<size_t>(args.size()) != n) {
            user_error() << symbol_ << ": called with " << args.size() << " arguments, expected "
                         << n;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        for (size_t i = 0; i < n; ++i) {
            DLTensor* t = args[static_cast<int>(i)].as_tensor();
            int v = i < inputs_.size() ? inputs_[i] : outputs_[i - inputs_.size()];
            if (!t || t->ndim != static_cast<int>(shapes_[v].size()) ||
                !std::equal(shapes_[v].begin(), shapes_[v].end(), t->shape) ||
                t->dtype.code != kDLFloat || t->dtype.bits != 32) {
                user_error() << symbol_ << ": argument " << i << " is not the float32 tensor of "
                             << "the shape the region was compiled for";
            }
        }
        for (auto& [mem, arg] : bindings_) {
            DLTensor* t = args[arg].as_tensor();
            mem.set_data_handle(static_cast<char*>(t->data) + t->byte_offset);
        }
        for (auto& [prim, margs] : steps_) prim.execute(stream_, margs);
        stream_.wait();
    }

private:
    memory user_memory(const memory::desc& md, int arg) {
        memory m(md, engine_, DNNL_MEMORY_NONE);
        bindings_.emplace_back(m, arg);
        return m;
    }

    bool is_output(int v) const { return user_arg_[v] >= static_cast<int>(inputs_.size()); }

    // Value v's elements, plain, described by `md` (another shape of the same elements, or a
    // strided view): the same bytes, no copy.
    memory view(int v, const memory::desc& md) {
        if (user_arg_[v] >= 0) return user_memory(md, user_arg_[v]);
        if (constant_[v]) return memory(md, engine_, const_cast<char*>(constant_[v]));
        memory m = get(v, plain(shapes_[v]));
        return memory(md, engine_, m.get_data_handle());
    }

    // Value v in layout `md`: its memory, or a reordered copy (made once: at load for a
    // constant, by a step before each use otherwise).
    memory get(int v, const memory::desc& md) {
        if (canonical_[v].get_desc() == md) return canonical_[v];
        for (auto& [key, m] : converted_) {
            if (key == v && m.get_desc() == md) return m;
        }
        memory m(md, engine_);
        ::dnnl::reorder r(canonical_[v], m);
        if (constant_[v]) {
            r.execute(stream_, canonical_[v], m);
            stream_.wait();
        } else {
            steps_.push_back({r, {{DNNL_ARG_FROM, canonical_[v]}, {DNNL_ARG_TO, m}}});
        }
        converted_.emplace_back(v, m);
        return m;
    }

    // The memory a step writes value v into: the caller's tensor for an output (which `md` must
    // describe: the step was created with a plain destination), else new memory in `md`.
    memory destination(int v, const memory::desc& md) {
        if (!is_output(v)) canonical_[v] = memory(md, engine_);
        return canonical_[v];
    }

    memory::desc dst_request(int v, bool follow_any = true) {
        return is_output(v) || !follow_any ? plain(shapes_[v]) : any(shapes_[v]);
    }

    ::dnnl::primitive_attr post_ops(const json& step, bool sum) {
        ::dnnl::post_ops ops;
        if (sum) ops.append_sum(1.0f);
        if (step.contains("post_op") && !step["post_op"].is_null()) {
            const json& e = step["post_op"];
            ops.append_eltwise(1.0f, eltwise_alg(e.at("alg")), e.at("alpha").get<float>(),
                               e.at("beta").get<float>());
        }
        ::dnnl::primitive_attr attr;
        attr.set_post_ops(ops);
        return attr;
    }

    void add_step(const json& step) {
        const std::string op = step.at("op");
        if (op == "conv2d" || op == "inner_product") {
            layer(step, op == "conv2d");
        } else if (op == "eltwise") {
            int src = step.at("src"), dst = step.at("dst");
            memory s = is_output(dst) ? get(src, plain(shapes_[src])) : canonical_[src];
            ::dnnl::eltwise_forward::primitive_desc pd(
                {::dnnl::prop_kind::forward_inference, eltwise_alg(step.at("alg")), s.get_desc(),
                 step.at("alpha").get<float>(), step.at("beta").get<float>()},
                engine_);
            memory d = destination(dst, pd.dst_desc());
            steps_.push_back({::dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}}});
        } else if (op == "binary") {
            binary(step);
        } else if (op == "pool") {
            pool(step);
        } else if (op == "softmax") {
            int src = step.at("src"), dst = step.at("dst");
            memory s = get(src, plain(shapes_[src]));
            ::dnnl::softmax_forward::primitive_desc pd(
                {::dnnl::prop_kind::forward_inference, s.get_desc(), step.at("axis").get<int>()},
                engine_);
            memory d = destination(dst, plain(shapes_[dst]));
            steps_.push_back({::dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}}});
        } else if (op == "matmul") {
            matmul(step);
        } else if (op == "copy") {
            int src = step.at("src"), dst = step.at("dst");
            memory s = view(src, plain(shapes_[dst]));
            if (is_output(dst)) {
                steps_.push_back({::dnnl::reorder(s, canonical_[dst]),
                                  {{DNNL_ARG_FROM, s}, {DNNL_ARG_TO, canonical_[dst]}}});
            } else {
                canonical_[dst] = s;  // a reshape of a value read in place
            }
        } else {
            user_error() << "unknown step '" << op << "'";
        }
    }

    void layer(const json& step, bool conv) {
        int src = step.at("src"), w = step.at("weights"), bias = step.at("bias");
        int sum = step.at("sum"), dst = step.at("dst");
        const memory::dims& in = shapes_[src];
        memory::dims wdims = shapes_[w];
        int64_t groups = conv ? step.at("groups").get<int64_t>() : 1;
        if (groups > 1) {  // [O, I/g, KH, KW] is [g, O/g, I/g, KH, KW] in the same bytes
            wdims = {groups, wdims[0] / groups, wdims[1], wdims[2], wdims[3]};
        }
        memory::desc bias_md = bias >= 0 ? any({shapes_[dst][1]}) : memory::desc();
        ::dnnl::primitive_attr attr = post_ops(step, sum >= 0);
        memory::desc dst_md = dst_request(dst);
        ::dnnl::primitive prim;
        memory::desc src_want, w_want, bias_want, dst_got;
        if (conv) {
            auto strides = step.at("strides").get<memory::dims>();
            auto pad = step.at("padding").get<memory::dims>();
            auto dilation = step.at("dilation").get<memory::dims>();
            for (auto& d : dilation) d -= 1;  // oneDNN counts the gaps
            ::dnnl::convolution_forward::desc d(::dnnl::prop_kind::forward_inference,
                                                ::dnnl::algorithm::convolution_direct, any(in),
                                                any(wdims), bias_md, dst_md, strides, dilation,
                                                {pad[0], pad[1]}, {pad[2], pad[3]});
            ::dnnl::convolution_forward::primitive_desc pd(d, attr, engine_);
            prim = ::dnnl::convolution_forward(pd);
            src_want = pd.src_desc();
            w_want = pd.weights_desc();
            bias_want = pd.bias_desc();
            dst_got = pd.dst_desc();
        } else {
            ::dnnl::inner_product_forward::desc d(::dnnl::prop_kind::forward_inference, any(in),
                                                  any(wdims), bias_md, dst_md);
            ::dnnl::inner_product_forward::primitive_desc pd(d, attr, engine_);
            prim = ::dnnl::inner_product_forward(pd);
            src_want = pd.src_desc();
            w_want = pd.weights_desc();
            bias_want = pd.bias_desc();
            dst_got = pd.dst_desc();
        }
        std::unordered_map<int, memory> margs;
        margs[DNNL_ARG_SRC] = get(src, src_want);
        margs[DNNL_ARG_WEIGHTS] =
            groups > 1 ? reordered(view(w, plain(wdims)), w_want) : get(w, w_want);
        if (bias >= 0)
            margs[DNNL_ARG_BIAS] = reordered(view(bias, plain({shapes_[dst][1]})), bias_want);
        memory d = destination(dst, dst_got);
        if (sum >= 0) {  // the sum post-op adds what the destination holds
            memory r = get(sum, d.get_desc());
            if (r != d) {
                steps_.push_back({::dnnl::reorder(r, d), {{DNNL_ARG_FROM, r}, {DNNL_ARG_TO, d}}});
            }
        }
        margs[DNNL_ARG_DST] = d;
        steps_.push_back({prim, margs});
    }

    // A constant's memory in layout `md`, reordered now.
    memory reordered(memory from, const memory::desc& md) {
        if (from.get_desc() == md) return from;
        memory m(md, engine_);
        ::dnnl::reorder(from, m).execute(stream_, from, m);
        stream_.wait();
        return m;
    }

    void binary(const json& step) {
        using A = ::dnnl::algorithm;
        static const std::map<std::string, A> kAlgs = {
            {"add", A::binary_add}, {"sub", A::binary_sub}, {"mul", A::binary_mul},
            {"div", A::binary_div}, {"max", A::binary_max}, {"min", A::binary_min}};
        int a = step.at("src0"), b = step.at("src1"), dst = step.at("dst");
        memory s0 = is_output(dst) ? get(a, plain(shapes_[a])) : canonical_[a];
        memory s1;
        if (shapes_[b] == shapes_[dst]) {
            s1 = get(b, s0.get_desc());
        } else {  // broadcast: leading 1s to the result's rank, plain
            memory::dims dims(shapes_[dst].size() - shapes_[b].size(), 1);
            dims.insert(dims.end(), shapes_[b].begin(), shapes_[b].end());
            s1 = view(b, plain(dims));
        }
        ::dnnl::binary::primitive_desc pd(
            {kAlgs.at(step.at("alg")), s0.get_desc(), s1.get_desc(), s0.get_desc()}, engine_);
        memory d = destination(dst, pd.dst_desc());
        steps_.push_back(
            {::dnnl::binary(pd), {{DNNL_ARG_SRC_0, s0}, {DNNL_ARG_SRC_1, s1}, {DNNL_ARG_DST, d}}});
    }

    void pool(const json& step) {
        using A = ::dnnl::algorithm;
        int src = step.at("src"), dst = step.at("dst");
        std::string alg = step.at("alg");
        A a = alg == "max"           ? A::pooling_max
              : alg == "avg_include" ? A::pooling_avg_include_padding
                                     : A::pooling_avg_exclude_padding;
        auto pad = step.at("padding").get<memory::dims>();
        memory s = canonical_[src];
        ::dnnl::pooling_forward::primitive_desc pd({::dnnl::prop_kind::forward_inference,
                                                    a,
                                                    s.get_desc(),
                                                    dst_request(dst),
                                                    step.at("strides").get<memory::dims>(),
                                                    step.at("kernel").get<memory::dims>(),
                                                    {pad[0], pad[1]},
                                                    {pad[2], pad[3]}},
                                                   engine_);
        memory d = destination(dst, pd.dst_desc());
        std::unordered_map<int, memory> margs = {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}};
        if (pd.workspace_desc().get_size() > 0) {
            margs[DNNL_ARG_WORKSPACE] = memory(pd.workspace_desc(), engine_);
        }
        steps_.push_back({::dnnl::pooling_forward(pd), margs});
    }

    void matmul(const json& step) {
        int a = step.at("src0"), b = step.at("src1"), dst = step.at("dst");
        // A transposed operand is a strided view of the plain one: its last two dimensions swap.
        auto operand = [&](int v, bool transposed) {
            memory::dims dims = shapes_[v];
            if (!transposed) return get(v, plain(dims));
            memory::desc p = plain(dims);
            memory::dims strides(p.data.format_desc.blocking.strides,
                                 p.data.format_desc.blocking.strides + dims.size());
            size_t r = dims.size();
            std::swap(dims[r - 1], dims[r - 2]);
            std::swap(strides[r - 1], strides[r - 2]);
            return view(v, memory::desc(dims, dt::f32, strides));
        };
        memory s0 = operand(a, step.at("transpose_a").get<bool>());
        memory s1 = operand(b, step.at("transpose_b").get<bool>());
        ::dnnl::matmul::primitive_desc pd({s0.get_desc(), s1.get_desc(), plain(shapes_[dst])},
                                          engine_);
        memory d = destination(dst, pd.dst_desc());
        steps_.push_back(
            {::dnnl::matmul(pd), {{DNNL_ARG_SRC, s0}, {DNNL_ARG_WEIGHTS, s1}, {DNNL_ARG_DST, d}}});
    }

    ::dnnl::engine engine_;
    ::dnnl::stream stream_;
    const char* weights_;
    std::string symbol_;
    std::vector<memory::dims> shapes_;
    std::vector<memory> canonical_;
    std::vector<int> user_arg_;          // the call argument a value is bound to, or -1
    std::vector<const char*> constant_;  // a constant's bytes, or null
    std::vector<int> inputs_, outputs_;
    std::vector<std::pair<memory, int>> bindings_;
    std::vector<std::pair<int, memory>> converted_;
    std::vector<std::pair<::dnnl::primitive, std::unordered_map<int, memory>>> steps_;
    std::mutex mutex_;  // the steps share their memories: one call at a time
};

class DnnlModule : public runtime::ModuleNode {
public:
    DnnlModule(const void* data, size_t size)
        : bytes_(static_cast<const char*>(data), size), engine_(::dnnl::engine::kind::cpu, 0) {
        if (size < 16 || std::memcmp(data, kDnnlMagic, 8) != 0) {
            user_error() << "the bytes are no oneDNN regions (bad header)";
        }
        uint64_t n = 0;
        for (int i = 0; i < 8; ++i)
            n |= uint64_t(static_cast<unsigned char>(bytes_[8 + i])) << (8 * i);
        if (n > size - 16) user_error() << "the oneDNN regions are truncated";
        json doc = json::parse(bytes_.substr(16, n));
        if (doc.at("version").get<int>() != kDnnlFormatVersion) {
            user_error() << "oneDNN regions of format version " << doc.at("version")
                         << ", this library reads " << kDnnlFormatVersion;
        }
        const char* weights = bytes_.data() + (16 + n + 63) / 64 * 64;
        for (const auto& fn : doc.at("functions")) {
            auto f = std::make_unique<DnnlFunction>(fn, weights, engine_);
            names_.push_back(f->symbol());
            functions_[f->symbol()] = std::move(f);
        }
    }

    runtime::PackedFunc get_function(const std::string& name) override {
        auto it = functions_.find(name);
        if (it == functions_.end()) return runtime::PackedFunc();
        DnnlFunction* f = it->second.get();
        Ref<Object> keep(this);
        return runtime::PackedFunc(
            [f, keep](const runtime::Args& args, runtime::RetValue*) { f->run(args); });
    }
    std::vector<std::string> function_names() const override { return names_; }
    std::string type_key() const override { return "dnnl"; }

private:
    std::string bytes_;  // the weights are read in place
    ::dnnl::engine engine_;
    std::vector<std::string> names_;
    std::map<std::string, std::unique_ptr<DnnlFunction>> functions_;
};

}  // namespace

}  // namespace anvil::codegen::dnnl

extern "C" ANVIL_API int anvil_external_module_create(const void* bytes, size_t size,
                                                      AnvilModuleHandle* out) {
    return anvil::runtime::catch_to_status([&] {
        *out = nullptr;
        try {
            auto node = anvil::make_ref<anvil::codegen::dnnl::DnnlModule>(bytes, size);
            *out = anvil::runtime::module_new_handle(anvil::runtime::Module(node));
        } catch (const ::dnnl::error& e) {
            anvil::user_error() << "oneDNN: " << e.what();
        }
        return 0;
    });
}
