#include "codegen/external/dnnl/runtime/dnnl_check.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "codegen/external/dnnl/dnnl_format.h"
#include "support/error.h"

namespace anvil::codegen::dnnl {

namespace {

using nlohmann::json;
using Shape = std::vector<int64_t>;

class FunctionChecker {
public:
    FunctionChecker(const json& fn, size_t weights_size) : fn_(fn), weights_size_(weights_size) {}

    void check() {
        if (!fn_.is_object() || !fn_.contains("symbol") || !fn_["symbol"].is_string()) {
            fail("a region without a symbol");
        }
        symbol_ = fn_["symbol"].get<std::string>();
        for (const auto& s : array("values")) shapes_.push_back(shape(s));
        for (const auto& d : array("dtypes")) {
            if (!d.is_string() || !find_value_type(d.get<std::string>())) fail("an unknown dtype");
            dtypes_.push_back(d.get<std::string>());
        }
        if (dtypes_.size() != shapes_.size()) fail("not one dtype per value");
        defined_.assign(shapes_.size(), false);
        std::set<int> seen;
        for (const auto& key : {"inputs", "outputs"}) {
            for (const auto& v : array(key)) {
                int id = value(v);
                if (!seen.insert(id).second) fail("value " + std::to_string(id) + " bound twice");
                if (std::string(key) == "inputs")
                    defined_[id] = true;
                else
                    outputs_.push_back(id);
            }
        }
        for (const auto& c : array("constants")) {
            int id = value(c.at("value"));
            if (!seen.insert(id).second)
                fail("constant value " + std::to_string(id) + " bound twice");
            int64_t at = integer(c.at("offset"));
            if (at < 0) fail("a negative constant offset");
            uint64_t offset = static_cast<uint64_t>(at);
            uint64_t bytes = bytes_of(id);
            if (offset > weights_size_ || bytes > weights_size_ - offset) {
                fail("constant value " + std::to_string(id) + " lies outside the weights");
            }
            defined_[id] = true;
            constants_.insert(id);
        }
        uint64_t total = 0;
        for (size_t v = 0; v < shapes_.size(); ++v) total += bytes_of(static_cast<int>(v));
        if (total > max_region_bytes()) {
            fail("its values need " + std::to_string(total) + " bytes, more than " +
                 std::to_string(max_region_bytes()) + " (ANVIL_DNNL_MAX_REGION_BYTES)");
        }
        size_t i = 0;
        for (const auto& step : array("steps")) {
            step_ = static_cast<int>(i++);
            try {
                check_step(step);
            } catch (const nlohmann::json::exception& e) {
                fail(e.what());
            }
        }
        step_ = -1;
        for (int o : outputs_) {
            if (!defined_[o]) fail("output value " + std::to_string(o) + " is never computed");
        }
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        user_error() << "oneDNN region " << (symbol_.empty() ? "?" : symbol_)
                     << (step_ >= 0 ? ", step " + std::to_string(step_) : std::string()) << ": "
                     << what;
        ANVIL_UNREACHABLE();
    }

    const json& array(const char* key) const {
        if (!fn_.contains(key) || !fn_[key].is_array()) fail(std::string("no array '") + key + "'");
        return fn_[key];
    }

    // What a region may allocate at most, for its values: 64 GiB, or
    // $ANVIL_DNNL_MAX_REGION_BYTES (the fuzz harness sets a small limit).
    static uint64_t max_region_bytes() {
        const char* env = std::getenv("ANVIL_DNNL_MAX_REGION_BYTES");
        return env && *env ? std::strtoull(env, nullptr, 10) : uint64_t(1) << 36;
    }

    static int64_t integer(const json& v) {
        if (!v.is_number_integer()) throw json::type_error::create(302, "an integer expected", &v);
        return v.get<int64_t>();
    }

    uint64_t bytes_of(int v) const {
        return uint64_t(find_value_type(dtypes_[v])->bytes) * elements(shapes_[v]);
    }

    static uint64_t elements(const Shape& s) {
        uint64_t n = 1;
        for (int64_t d : s) n *= static_cast<uint64_t>(d);
        return n;
    }

    Shape shape(const json& s) const {
        if (!s.is_array() || s.empty() || s.size() > 6)
            fail("a value shape of rank 1 to 6 expected");
        Shape out;
        uint64_t n = 1;
        for (const auto& d : s) {
            int64_t v = integer(d);
            if (v < 1 || v > (int64_t(1) << 31)) fail("a dimension out of range");
            n *= static_cast<uint64_t>(v);
            if (n > (uint64_t(1) << 34)) fail("a value of more than 2^34 elements");
            out.push_back(v);
        }
        return out;
    }

    int value(const json& v) const {
        int64_t id = integer(v);
        if (id < 0 || id >= static_cast<int64_t>(shapes_.size())) {
            fail("value id " + std::to_string(id) + " out of range");
        }
        return static_cast<int>(id);
    }

    // A value the step reads: computed before it.
    int read(const json& step, const char* key) const {
        if (!step.contains(key)) fail(std::string("no '") + key + "'");
        int id = value(step[key]);
        if (!defined_[id]) fail("value " + std::to_string(id) + " is read before it is computed");
        reads_.push_back(id);
        return id;
    }
    int read_optional(const json& step, const char* key) const {
        if (!step.contains(key)) fail(std::string("no '") + key + "'");
        if (integer(step[key]) == -1) return -1;
        return read(step, key);
    }
    int constant(const json& step, const char* key) const {
        int id = read(step, key);
        if (!constants_.count(id)) fail(std::string("'") + key + "' is not a constant");
        return id;
    }

    std::vector<int64_t> ints(const json& step, const char* key, size_t n, int64_t min) const {
        if (!step.contains(key) || !step[key].is_array() || step[key].size() != n) {
            fail(std::string("'") + key + "' must hold " + std::to_string(n) + " integers");
        }
        std::vector<int64_t> out;
        for (const auto& x : step[key]) {
            int64_t v = integer(x);
            if (v < min || v > (int64_t(1) << 20)) fail(std::string("'") + key + "' out of range");
            out.push_back(v);
        }
        return out;
    }

    void eltwise(const json& e) const {
        static const std::set<std::string> kAlgs = {
            "relu", "clip", "gelu_erf", "gelu_tanh", "logistic",  "tanh",  "exp",
            "log",  "sqrt", "abs",      "elu",       "hardswish", "linear"};
        if (!e.is_object() || !kAlgs.count(e.at("alg").get<std::string>()) ||
            !e.at("alpha").is_number() || !e.at("beta").is_number()) {
            fail("a malformed eltwise operation");
        }
    }

    // An int8 layer's types and its quantization parameters.
    void quantized(const json& q, int src, int w, int bias, int sum, int dst) const {
        auto is = [&](int v, std::initializer_list<const char*> names) {
            for (const char* n : names) {
                if (dtypes_[v] == n) return true;
            }
            return false;
        };
        if (!is(src, {"u8", "s8"}) || !is(w, {"s8"}) || (bias >= 0 && !is(bias, {"s32"})) ||
            !is(dst, {"u8", "s8"}) || sum >= 0) {
            fail(
                "a quantized layer of other than u8/s8 data, s8 weights, an s32 bias and a "
                "u8/s8 result, or with a sum");
        }
        for (const char* key : {"src_zero_point", "dst_zero_point"}) {
            int64_t zp = integer(q.at(key));
            if (zp < -(int64_t(1) << 24) || zp > (int64_t(1) << 24))
                fail("a zero point out of range");
        }
        const json& scales = q.at("scales");
        if (!scales.is_array() ||
            (scales.size() != 1 && scales.size() != static_cast<size_t>(shapes_[dst][1]))) {
            fail("not one scale or one per output channel");
        }
        for (const auto& x : scales) {
            if (!x.is_number() || !(x.get<double>() > 0) || x.get<double>() > 1e30) {
                fail("a scale that is not a positive number");
            }
        }
    }

    void check_step(const json& step) {
        if (!step.is_object() || !step.contains("op") || !step["op"].is_string()) fail("no op");
        reads_.clear();
        bool typed = false;  // the step's value types are checked (an int8 layer, a copy)
        const std::string op = step["op"];
        if (!step.contains("dst")) fail("no 'dst'");
        int dst = value(step["dst"]);
        if (defined_[dst]) fail("value " + std::to_string(dst) + " is computed twice");
        const Shape& out = shapes_[dst];
        if (op == "conv2d" || op == "inner_product") {
            bool conv = op == "conv2d";
            int src = read(step, "src"), w = constant(step, "weights");
            int bias = read_optional(step, "bias"), sum = read_optional(step, "sum");
            size_t rank = conv ? 4 : 2;
            const Shape &in = shapes_[src], &ws = shapes_[w];
            if (in.size() != rank || ws.size() != rank || out.size() != rank || in[0] != out[0]) {
                fail(op + " of values of the wrong rank");
            }
            int64_t groups = conv ? integer(step.at("groups")) : 1;
            if (groups < 1 || out[1] % groups || in[1] != ws[1] * groups || ws[0] != out[1]) {
                fail(op + ": the weights do not fit the data and result");
            }
            if (conv) {
                ints(step, "strides", 2, 1);
                ints(step, "dilation", 2, 1);
                ints(step, "padding", 4, 0);
            }
            if (bias >= 0 &&
                (!constants_.count(bias) || elements(shapes_[bias]) != uint64_t(out[1]))) {
                fail(op + ": the bias is not a constant of one value per output channel");
            }
            if (sum >= 0 && shapes_[sum] != out) fail(op + ": the summed value's shape differs");
            if (sum >= 0 && !conv) fail("inner_product: no sum post-op");
            if (step.contains("post_op") && !step["post_op"].is_null()) eltwise(step["post_op"]);
            if (step.contains("quantized")) {
                quantized(step["quantized"], src, w, bias, sum, dst);
                typed = true;
            }
        } else if (op == "eltwise") {
            eltwise(step);
            if (shapes_[read(step, "src")] != out) fail("eltwise: the shapes differ");
        } else if (op == "binary") {
            static const std::set<std::string> kAlgs = {"add", "sub", "mul", "div", "max", "min"};
            if (!kAlgs.count(step.at("alg").get<std::string>())) fail("unknown binary algorithm");
            const Shape &a = shapes_[read(step, "src0")], &b = shapes_[read(step, "src1")];
            if (a != out || b.size() > out.size())
                fail("binary: src0 is not of the result's shape");
            for (size_t i = 0; i < b.size(); ++i) {
                int64_t o = out[out.size() - b.size() + i];
                if (b[i] != 1 && b[i] != o) fail("binary: src1 does not broadcast to the result");
            }
        } else if (op == "pool") {
            static const std::set<std::string> kAlgs = {"max", "avg_include", "avg_exclude"};
            if (!kAlgs.count(step.at("alg").get<std::string>())) fail("unknown pooling algorithm");
            const Shape& in = shapes_[read(step, "src")];
            if (in.size() != 4 || out.size() != 4 || in[0] != out[0] || in[1] != out[1]) {
                fail("pool: the shapes do not fit");
            }
            auto kernel = ints(step, "kernel", 2, 1);
            ints(step, "strides", 2, 1);
            auto pad = ints(step, "padding", 4, 0);
            for (int i = 0; i < 4; ++i) {
                if (pad[i] >= kernel[i % 2]) fail("pool: a padding as large as the window");
            }
        } else if (op == "softmax") {
            const Shape& in = shapes_[read(step, "src")];
            int64_t axis = integer(step.at("axis"));
            if (in != out || axis < 0 || axis >= static_cast<int64_t>(out.size())) {
                fail("softmax: the shapes or the axis do not fit");
            }
        } else if (op == "concat") {
            int64_t axis = integer(step.at("axis"));
            if (!step.at("srcs").is_array() || step["srcs"].empty() || axis < 0 ||
                axis >= static_cast<int64_t>(out.size())) {
                fail("concat: no sources, or the axis is out of range");
            }
            int64_t total = 0;
            for (const auto& v : step["srcs"]) {
                int id = value(v);
                reads_.push_back(id);
                if (!defined_[id])
                    fail("value " + std::to_string(id) + " is read before it is computed");
                const Shape& in = shapes_[id];
                if (in.size() != out.size()) fail("concat: the ranks differ");
                for (size_t d = 0; d < out.size(); ++d) {
                    if (static_cast<int64_t>(d) != axis && in[d] != out[d]) {
                        fail("concat: the sources differ off the axis");
                    }
                }
                total += in[axis];
            }
            if (total != out[axis]) fail("concat: the sources do not add up to the result");
        } else if (op == "matmul") {
            const Shape &a = shapes_[read(step, "src0")], &b = shapes_[read(step, "src1")];
            if (a.size() < 2 || a.size() != b.size() || out.size() != a.size() ||
                !step.at("transpose_a").is_boolean() || !step.at("transpose_b").is_boolean()) {
                fail("matmul: the ranks do not fit");
            }
            size_t r = a.size();
            bool ta = step["transpose_a"].get<bool>(), tb = step["transpose_b"].get<bool>();
            int64_t m = ta ? a[r - 1] : a[r - 2], k = ta ? a[r - 2] : a[r - 1];
            int64_t kb = tb ? b[r - 1] : b[r - 2], n = tb ? b[r - 2] : b[r - 1];
            if (k != kb || out[r - 2] != m || out[r - 1] != n ||
                !std::equal(a.begin(), a.end() - 2, b.begin()) ||
                !std::equal(a.begin(), a.end() - 2, out.begin())) {
                fail("matmul: the shapes do not fit");
            }
        } else if (op == "copy") {
            int src = read(step, "src");
            if (elements(shapes_[src]) != elements(out) || dtypes_[src] != dtypes_[dst]) {
                fail("copy: the element counts or types differ");
            }
            typed = true;
        } else {
            fail("unknown op '" + op + "'");
        }
        // Every step but an int8 layer and a copy is of f32 values.
        reads_.push_back(dst);
        for (int v : reads_) {
            if (!typed && dtypes_[v] != "f32") fail(op + " of a value that is not f32");
        }
        defined_[dst] = true;
    }

    const json& fn_;
    size_t weights_size_;
    std::string symbol_;
    int step_ = -1;
    std::vector<Shape> shapes_;
    std::vector<std::string> dtypes_;
    std::vector<bool> defined_;
    mutable std::vector<int> reads_;  // the values the step being checked reads
    std::vector<int> outputs_;
    std::set<int> constants_;
};

}  // namespace

void check_function(const nlohmann::json& fn, size_t weights_size) {
    FunctionChecker(fn, weights_size).check();
}

}  // namespace anvil::codegen::dnnl
