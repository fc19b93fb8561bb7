#include "runtime/graph_plan.h"

#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "runtime/json_reader.h"
#include "runtime/param_json.h"
#include "runtime/shape_text.h"
#include "support/error.h"

namespace anvil::runtime {
namespace {

using nlohmann::json;

PlanTensor read_tensor(const Reader& r, const json& obj, bool with_storage) {
    PlanTensor t;
    t.shape = r.shape(obj);
    t.dtype = r.dtype(obj);
    if (with_storage) t.storage = r.small_int(obj, "storage");
    return t;
}

PlanEntry read_entry(const Reader& r, const json& v) {
    // Ids beyond int's range would wrap into valid-looking ones.
    auto id = [&](const json& x) {
        int64_t value = x.get<int64_t>();
        if (value < INT32_MIN || value > INT32_MAX)
            r.fail("argument id " + x.dump() + " is out of range");
        return static_cast<int>(value);
    };
    if (v.is_number_integer()) return PlanEntry{id(v), 0};
    if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer()) {
        return PlanEntry{id(v[0]), id(v[1])};
    }
    r.fail("an argument must be a node id or a [node, index] pair, not " + v.dump());
}

PlanNode read_node(const json& obj, size_t i) {
    Reader r("nodes[" + std::to_string(i) + "]");
    if (!obj.is_object()) r.fail("a node must be an object");
    PlanNode node;
    node.name = r.string(obj, "name");
    r = Reader("nodes[" + std::to_string(i) + "] ('" + node.name + "')");
    std::string kind = r.string(obj, "kind");
    if (kind == "input") {
        node.kind = PlanNodeKind::input;
        node.outputs.push_back(read_tensor(r, obj, true));
    } else if (kind == "param") {
        node.kind = PlanNodeKind::param;
        node.outputs.push_back(read_tensor(r, obj, false));
    } else if (kind == "kernel") {
        node.kind = PlanNodeKind::kernel;
        node.kernel = r.string(obj, "kernel");
        if (obj.contains("flops")) node.flops = r.integer(obj, "flops");
        for (const json& a : r.array(obj, "args")) node.args.push_back(read_entry(r, a));
        if (obj.contains("outputs")) {
            if (obj.contains("shape")) r.fail("give either 'outputs' or 'shape', not both");
            for (const json& o : r.array(obj, "outputs")) {
                if (!o.is_object()) r.fail("'outputs' must be a list of objects");
                node.outputs.push_back(read_tensor(r, o, true));
            }
            if (node.outputs.empty()) r.fail("a kernel node needs at least one output");
        } else {
            node.outputs.push_back(read_tensor(r, obj, true));
        }
    } else {
        r.fail("unknown kind '" + kind + "'; expected input, param or kernel");
    }
    return node;
}

json shape_json(const std::vector<int64_t>& shape) {
    return json(shape);
}

// What an allocation of `bytes` takes: buffers are ANVIL_TENSOR_ALIGNMENT aligned.
int64_t round_to_alignment(int64_t bytes) {
    return (bytes + ANVIL_TENSOR_ALIGNMENT - 1) / ANVIL_TENSOR_ALIGNMENT * ANVIL_TENSOR_ALIGNMENT;
}

const char* kind_name(PlanNodeKind kind) {
    switch (kind) {
        case PlanNodeKind::input:
            return "input";
        case PlanNodeKind::param:
            return "param";
        case PlanNodeKind::kernel:
            return "kernel";
    }
    return "?";
}

std::string node_where(const GraphPlan& plan, size_t i) {
    return "nodes[" + std::to_string(i) + "] ('" + plan.nodes[i].name + "')";
}

}  // namespace

int64_t PlanTensor::nbytes() const {
    int64_t count = 1;
    for (int64_t d : shape) {
        if (d < 0 || __builtin_mul_overflow(count, d, &count)) return -1;
    }
    int64_t bytes = 0;
    if (__builtin_mul_overflow(count, dl_dtype_bytes(dtype), &bytes)) return -1;
    return bytes;
}

GraphPlan plan_from_json(std::string_view text) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception& e) {
        user_error() << "graph plan: not valid JSON: " << e.what();
    }
    Reader top("document");
    if (!doc.is_object()) top.fail("the plan must be a JSON object");
    int64_t version = top.integer(doc, "version");
    if (version != GraphPlan::kVersion) {
        top.fail("version " + std::to_string(version) + " is not supported; this runtime reads " +
                 std::to_string(GraphPlan::kVersion) + " (recompile the model)");
    }
    GraphPlan plan;
    const json& nodes = top.array(doc, "nodes");
    for (size_t i = 0; i < nodes.size(); ++i) plan.nodes.push_back(read_node(nodes[i], i));

    const json& inputs = top.array(doc, "inputs");
    for (size_t i = 0; i < inputs.size(); ++i) {
        Reader r("inputs[" + std::to_string(i) + "]");
        if (!inputs[i].is_object()) r.fail("an input must be an object");
        plan.inputs.push_back({r.string(inputs[i], "name"), r.small_int(inputs[i], "node")});
    }
    const json& outputs = top.array(doc, "outputs");
    for (size_t i = 0; i < outputs.size(); ++i) {
        Reader r("outputs[" + std::to_string(i) + "]");
        const json& o = outputs[i];
        if (!o.is_object()) r.fail("an output must be an object");
        PlanOutput out;
        out.entry.node = r.small_int(o, "node");
        out.entry.index = o.contains("index") ? r.small_int(o, "index") : 0;
        out.name = o.contains("name") ? r.string(o, "name") : "output" + std::to_string(i);
        plan.outputs.push_back(std::move(out));
    }
    const json& storage = top.array(doc, "storage");
    for (size_t i = 0; i < storage.size(); ++i) {
        Reader r("storage[" + std::to_string(i) + "]");
        const json& s = storage[i];
        if (!s.is_object()) r.fail("a storage must be an object");
        PlanStorage st;
        st.id = r.small_int(s, "id");
        st.bytes = r.integer(s, "bytes");
        if (s.contains("device")) st.device = r.string(s, "device");
        plan.storage.push_back(std::move(st));
    }
    if (doc.contains("params")) plan.params = read_params(doc["params"], "graph plan");
    validate_plan(plan);
    return plan;
}

std::string plan_to_json(const GraphPlan& plan, int indent) {
    json doc;
    doc["version"] = GraphPlan::kVersion;
    doc["inputs"] = json::array();
    for (const PlanInput& in : plan.inputs)
        doc["inputs"].push_back({{"name", in.name}, {"node", in.node}});
    doc["outputs"] = json::array();
    for (const PlanOutput& out : plan.outputs) {
        doc["outputs"].push_back(
            {{"node", out.entry.node}, {"index", out.entry.index}, {"name", out.name}});
    }
    doc["nodes"] = json::array();
    for (const PlanNode& node : plan.nodes) {
        json n = {{"kind", kind_name(node.kind)}, {"name", node.name}};
        auto put_tensor = [](json& dst, const PlanTensor& t, bool with_storage) {
            dst["shape"] = shape_json(t.shape);
            dst["dtype"] = dl_dtype_to_string(t.dtype);
            if (with_storage) dst["storage"] = t.storage;
        };
        if (node.kind == PlanNodeKind::kernel) {
            n["kernel"] = node.kernel;
            json args = json::array();
            for (const PlanEntry& a : node.args) {
                args.push_back(a.index == 0 ? json(a.node) : json::array({a.node, a.index}));
            }
            n["args"] = args;
            if (node.flops >= 0) n["flops"] = node.flops;
        }
        bool with_storage = node.kind != PlanNodeKind::param;
        if (node.outputs.size() == 1) {
            put_tensor(n, node.outputs[0], with_storage);
        } else {
            n["outputs"] = json::array();
            for (const PlanTensor& t : node.outputs) {
                json o = json::object();
                put_tensor(o, t, with_storage);
                n["outputs"].push_back(o);
            }
        }
        doc["nodes"].push_back(std::move(n));
    }
    doc["storage"] = json::array();
    for (const PlanStorage& s : plan.storage) {
        doc["storage"].push_back({{"id", s.id}, {"bytes", s.bytes}, {"device", s.device}});
    }
    doc["params"] = params_json(plan.params);
    return doc.dump(indent);
}

void validate_plan(const GraphPlan& plan, int64_t params_size) {
    auto fail = [](const std::string& where, const std::string& what) {
        user_error() << "graph plan: " << where << ": " << what;
    };
    std::unordered_map<int, int64_t> storage_bytes;
    for (size_t i = 0; i < plan.storage.size(); ++i) {
        const PlanStorage& s = plan.storage[i];
        std::string where = "storage[" + std::to_string(i) + "] (id " + std::to_string(s.id) + ")";
        if (s.id < 0) fail(where, "storage ids must be >= 0");
        if (s.bytes < 0) fail(where, "'bytes' is negative");
        if (s.device != "cpu") {
            fail(where, "device '" + s.device + "' is not supported; this runtime runs on cpu");
        }
        if (!storage_bytes.emplace(s.id, s.bytes).second) fail(where, "duplicate storage id");
    }
    std::set<std::string> names;
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
        const PlanNode& node = plan.nodes[i];
        std::string where = node_where(plan, i);
        if (!names.insert(node.name).second) fail(where, "two nodes are named '" + node.name + "'");
        if (node.kind != PlanNodeKind::kernel && node.outputs.size() != 1) {
            fail(where, "input and param nodes have exactly one output");
        }
        if (node.kind == PlanNodeKind::kernel) {
            if (node.kernel.empty()) fail(where, "'kernel' is empty");
            if (node.outputs.empty()) fail(where, "a kernel node needs at least one output");
            if (node.flops < -1) fail(where, "'flops' must be >= 0 (or absent when unknown)");
            for (const PlanEntry& a : node.args) {
                if (a.node < 0 || static_cast<size_t>(a.node) >= i) {
                    fail(where, "argument node " + std::to_string(a.node) +
                                    " does not refer to an earlier node");
                }
                if (a.index < 0 ||
                    static_cast<size_t>(a.index) >= plan.nodes[a.node].outputs.size()) {
                    fail(where, "argument [" + std::to_string(a.node) + ", " +
                                    std::to_string(a.index) + "]: node '" +
                                    plan.nodes[a.node].name + "' has no output " +
                                    std::to_string(a.index));
                }
            }
        }
        for (const PlanTensor& t : node.outputs) {
            int64_t nbytes = t.nbytes();
            if (nbytes < 0) fail(where, "invalid shape " + shape_text(t.shape));
            if (node.kind == PlanNodeKind::param) {
                auto it = plan.params.find(node.name);
                if (it == plan.params.end()) fail(where, "no entry in 'params' for this param");
                const PlanParam& p = it->second;
                if (p.shape != t.shape || !dl_dtype_equal(p.dtype, t.dtype)) {
                    fail(where, "node says " + dl_dtype_to_string(t.dtype) + shape_text(t.shape) +
                                    " but its params entry says " + dl_dtype_to_string(p.dtype) +
                                    shape_text(p.shape));
                }
                continue;
            }
            auto st = storage_bytes.find(t.storage);
            if (st == storage_bytes.end()) {
                fail(where, "storage id " + std::to_string(t.storage) + " is not declared");
            }
            if (st->second < nbytes) {
                fail(where, "tensor " + dl_dtype_to_string(t.dtype) + shape_text(t.shape) +
                                " needs " + std::to_string(nbytes) + " bytes but storage " +
                                std::to_string(t.storage) + " has " + std::to_string(st->second));
            }
        }
    }
    validate_params(plan.params, params_size, "graph plan");
    std::set<std::string> input_names;
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
        const PlanInput& in = plan.inputs[i];
        std::string where = "inputs[" + std::to_string(i) + "] ('" + in.name + "')";
        if (!input_names.insert(in.name).second) fail(where, "duplicate input name");
        if (in.node < 0 || static_cast<size_t>(in.node) >= plan.nodes.size()) {
            fail(where, "node " + std::to_string(in.node) + " does not exist");
        }
        if (plan.nodes[in.node].kind != PlanNodeKind::input) {
            fail(where, "node " + std::to_string(in.node) + " ('" + plan.nodes[in.node].name +
                            "') is not an input node");
        }
    }
    for (size_t i = 0; i < plan.outputs.size(); ++i) {
        const PlanOutput& out = plan.outputs[i];
        std::string where = "outputs[" + std::to_string(i) + "] ('" + out.name + "')";
        if (out.entry.node < 0 || static_cast<size_t>(out.entry.node) >= plan.nodes.size()) {
            fail(where, "node " + std::to_string(out.entry.node) + " does not exist");
        }
        const PlanNode& node = plan.nodes[out.entry.node];
        if (out.entry.index < 0 || static_cast<size_t>(out.entry.index) >= node.outputs.size()) {
            fail(where,
                 "node '" + node.name + "' has no output " + std::to_string(out.entry.index));
        }
    }
}

int64_t plan_storage_bytes(const GraphPlan& plan) {
    int64_t total = 0;
    for (const PlanStorage& s : plan.storage) total += round_to_alignment(s.bytes);
    return total;
}

int64_t plan_unshared_bytes(const GraphPlan& plan) {
    int64_t total = 0;
    for (const PlanNode& node : plan.nodes) {
        if (node.kind == PlanNodeKind::param) continue;
        for (const PlanTensor& t : node.outputs) total += round_to_alignment(t.nbytes());
    }
    return total;
}

std::string pack_params(const std::vector<std::pair<std::string, NDArray>>& params,
                        GraphPlan* plan) {
    if (plan == nullptr) user_error() << "pack_params: plan is NULL";
    return pack_params(params, &plan->params);
}

}  // namespace anvil::runtime
