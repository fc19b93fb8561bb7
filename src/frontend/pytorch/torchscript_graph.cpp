// Reading the TorchScript graph description (torchscript_graph.h): JSON → TsGraph, with every
// structural rule checked, since the description may come from a file the user hands the CLI.
#include "frontend/pytorch/torchscript_graph.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "support/error.h"

namespace anvil::frontend::pytorch {

using json = nlohmann::json;

namespace {

constexpr int kFormatVersion = 1;
// How deep blocks (If/Loop bodies), types and constants may nest.
constexpr int kMaxNesting = 64;

// `v` shortened for a message. Not dump(): it recurses, and a hostile document nests arrays
// a hundred thousand deep where a number belongs; an array or object shows its first level.
std::string brief(const json& v) {
    if (v.is_array()) return "an array of " + std::to_string(v.size());
    if (v.is_object()) {
        std::string out = "{";
        size_t shown = 0;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (shown++ == 4) {
                out += ", ...";
                break;
            }
            if (shown > 1) out += ", ";
            std::string key = json(it.key()).dump();
            out += key.size() <= 40 ? key : key.substr(0, 37) + "...";
            out += ": ...";
        }
        return out + "}";
    }
    std::string text = v.dump();
    return text.size() <= 80 ? text : text.substr(0, 77) + "...";
}

class Reader {
public:
    explicit Reader(std::string origin) : origin_(std::move(origin)) {}

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        user_error(SourceLoc{.file = origin_})
            << "malformed TorchScript graph description: " << where << ": " << what;
        ANVIL_UNREACHABLE();
    }

    const json& field(const json& obj, const char* name, const std::string& where) const {
        if (!obj.is_object()) fail(where, "expected an object");
        auto it = obj.find(name);
        if (it == obj.end()) fail(where, std::string("'") + name + "' is missing");
        return *it;
    }
    std::string string(const json& obj, const char* name, const std::string& where) const {
        const json& v = field(obj, name, where);
        if (!v.is_string()) fail(where, std::string("'") + name + "' must be a string");
        return v.get<std::string>();
    }
    int64_t integer(const json& v, const std::string& where) const {
        if (!v.is_number_integer()) fail(where, "expected an integer, got " + brief(v));
        return v.get<int64_t>();
    }
    const json& array(const json& obj, const char* name, const std::string& where) const {
        const json& v = field(obj, name, where);
        if (!v.is_array()) fail(where, std::string("'") + name + "' must be an array");
        return v;
    }

    TsType type(const json& j, const std::string& where, int depth) const {
        if (depth > kMaxNesting) fail(where, "types nest too deeply");
        std::string kind = string(j, "kind", where);
        TsType t;
        static const std::pair<const char*, TsType::Kind> kKinds[] = {
            {"tensor", TsType::Tensor},     {"int", TsType::Int},       {"float", TsType::Float},
            {"bool", TsType::Bool},         {"str", TsType::Str},       {"none", TsType::None},
            {"device", TsType::Device},     {"number", TsType::Number}, {"list", TsType::List},
            {"optional", TsType::Optional}, {"tuple", TsType::Tuple},   {"other", TsType::Other}};
        bool known = false;
        for (const auto& [name, k] : kKinds) {
            if (kind == name) t.kind = k, known = true;
        }
        if (!known) fail(where, "unknown type kind '" + kind + "'");
        switch (t.kind) {
            case TsType::Tensor:
                if (j.contains("dtype")) t.dtype = string(j, "dtype", where);
                if (j.contains("shape")) {
                    const json& s = array(j, "shape", where);
                    if (s.size() > 64) fail(where, "a tensor type of more than 64 dimensions");
                    std::vector<int64_t> shape;
                    for (const auto& d : s) shape.push_back(integer(d, where + ": shape"));
                    t.shape = shape;
                }
                break;
            case TsType::List:
            case TsType::Optional:
                t.elems.push_back(type(field(j, "elem", where), where, depth + 1));
                break;
            case TsType::Tuple:
                for (const auto& e : array(j, "elems", where)) {
                    t.elems.push_back(type(e, where, depth + 1));
                }
                break;
            case TsType::Other:
                if (j.contains("str")) t.str = string(j, "str", where);
                break;
            default:
                break;
        }
        return t;
    }

    TsConst constant(const json& j, const std::string& where, int depth) const {
        if (depth > kMaxNesting) fail(where, "constants nest too deeply");
        if (!j.is_object() || j.empty()) fail(where, "a constant must be a non-empty object");
        TsConst c;
        if (j.contains("int")) {
            c.kind = TsConst::Int;
            c.i = integer(j["int"], where);
        } else if (j.contains("float")) {
            c.kind = TsConst::Float;
            const json& v = j["float"];
            if (v.is_number()) {
                c.f = v.get<double>();
            } else if (v == "inf") {
                c.f = std::numeric_limits<double>::infinity();
            } else if (v == "-inf") {
                c.f = -std::numeric_limits<double>::infinity();
            } else if (v == "nan") {
                c.f = std::numeric_limits<double>::quiet_NaN();
            } else {
                fail(where, "a float constant must be a number, \"inf\", \"-inf\" or \"nan\"");
            }
        } else if (j.contains("bool")) {
            c.kind = TsConst::Bool;
            if (!j["bool"].is_boolean()) fail(where, "'bool' must be true or false");
            c.b = j["bool"].get<bool>();
        } else if (j.contains("str")) {
            c.kind = TsConst::Str;
            c.s = string(j, "str", where);
        } else if (j.contains("none")) {
            c.kind = TsConst::None;
        } else if (j.contains("device")) {
            c.kind = TsConst::Device;
            c.s = string(j, "device", where);
        } else if (j.contains("tensor")) {
            c.kind = TsConst::Tensor;
            c.s = string(j, "tensor", where);
            c.dtype = string(j, "dtype", where);
            c.param = j.contains("param") && j["param"].is_boolean() && j["param"].get<bool>();
            if (j.contains("quantized")) c.quantized = quantization(j["quantized"], where);
        } else if (j.contains("list") || j.contains("tuple")) {
            bool list = j.contains("list");
            c.kind = list ? TsConst::List : TsConst::Tuple;
            for (const auto& e : array(j, list ? "list" : "tuple", where)) {
                c.items.push_back(constant(e, where, depth + 1));
            }
        } else {
            fail(where, "unknown constant " + brief(j));
        }
        return c;
    }

    TsQuantization quantization(const json& j, const std::string& where) const {
        std::string at = where + ": quantized";
        TsQuantization q;
        q.axis = integer(field(j, "axis", at), at + ": axis");
        for (const auto& s : array(j, "scales", at)) {
            if (!s.is_number() || !(s.get<double>() > 0) || !std::isfinite(s.get<double>())) {
                fail(at, "a scale must be a positive finite number, got " + brief(s));
            }
            q.scales.push_back(s.get<double>());
        }
        for (const auto& z : array(j, "zero_points", at)) {
            q.zero_points.push_back(integer(z, at + ": zero_points"));
        }
        if (q.scales.empty() || q.scales.size() != q.zero_points.size() || q.axis < -1 ||
            (q.axis == -1 && q.scales.size() != 1)) {
            fail(at, "expected as many scales as zero points, one of each when axis is -1");
        }
        return q;
    }

    TsValue value(const json& j, const std::string& where) {
        TsValue v;
        v.id = integer(field(j, "id", where), where + ": id");
        v.name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>()
                                                             : std::to_string(v.id);
        v.type = type(field(j, "type", where), where + " '" + v.name + "'", 0);
        if (!defined_.insert(v.id).second) {
            fail(where,
                 "value '" + v.name + "' (id " + std::to_string(v.id) + ") is defined twice");
        }
        return v;
    }

    // Reads a block; `visible` holds the ids defined so far in enclosing blocks (a value is used
    // only after its definition, where it is in scope).
    TsBlock block(const json& j, const std::string& where, int depth, std::set<int64_t> visible) {
        if (depth > kMaxNesting) fail(where, "blocks nest more than 64 deep");
        TsBlock b;
        for (const auto& in : array(j, "inputs", where)) {
            b.inputs.push_back(value(in, where + ": input"));
            visible.insert(b.inputs.back().id);
        }
        const json& nodes = array(j, "nodes", where);
        for (size_t k = 0; k < nodes.size(); ++k) {
            const json& n = nodes[k];
            TsNode node;
            node.kind = string(n, "kind", where + ": node " + std::to_string(k));
            std::string at = where + ": node " + std::to_string(k) + " (" + node.kind + ")";
            for (const auto& id : array(n, "inputs", at)) {
                int64_t i = integer(id, at + ": input");
                if (!visible.count(i)) {
                    fail(at,
                         "uses value " + std::to_string(i) + " before or outside its definition");
                }
                node.inputs.push_back(i);
            }
            if (n.contains("source")) node.source = string(n, "source", at);
            if (n.contains("attribute")) node.attribute = string(n, "attribute", at);
            if (n.contains("value")) node.value = constant(n["value"], at + ": value", 0);
            if (n.contains("blocks")) {
                for (const auto& sub : array(n, "blocks", at)) {
                    node.blocks.push_back(block(sub, at + ": block", depth + 1, visible));
                }
            }
            for (const auto& out : array(n, "outputs", at)) {
                node.outputs.push_back(value(out, at + ": output"));
                visible.insert(node.outputs.back().id);
            }
            b.nodes.push_back(std::move(node));
        }
        for (const auto& id : array(j, "outputs", where)) {
            int64_t i = integer(id, where + ": output");
            if (!visible.count(i))
                fail(where, "returns value " + std::to_string(i) + ", which is not defined there");
            b.outputs.push_back(i);
        }
        return b;
    }

private:
    std::string origin_;
    std::set<int64_t> defined_;
};

void type_str_to(const TsType& t, std::string& out) {
    static const char* kNames[] = {"Tensor", "int",    "float", "bool",     "str",   "NoneType",
                                   "Device", "number", "List",  "Optional", "Tuple", ""};
    if (t.kind == TsType::Other) {
        out += t.str.empty() ? "?" : t.str;
        return;
    }
    out += kNames[t.kind];
    if (t.kind == TsType::List || t.kind == TsType::Optional || t.kind == TsType::Tuple) {
        out += "[";
        for (size_t i = 0; i < t.elems.size(); ++i) {
            if (i) out += ", ";
            type_str_to(t.elems[i], out);
        }
        out += "]";
    }
}

}  // namespace

std::string type_str(const TsType& t) {
    std::string out;
    type_str_to(t, out);
    return out;
}

TsGraph parse_torchscript_graph(std::string_view text, const std::string& origin) {
    Reader r(origin);
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) r.fail("document", "not a JSON object");
    if (r.string(doc, "format", "document") != "anvil.torchscript-graph") {
        r.fail("document", "'format' is not \"anvil.torchscript-graph\"");
    }
    const json& version = r.field(doc, "version", "document");
    if (!version.is_number_integer() || version.get<int64_t>() != kFormatVersion) {
        r.fail("document", "version " + brief(version) + " is not supported (expected " +
                               std::to_string(kFormatVersion) + ")");
    }
    TsGraph g;
    g.model = doc.contains("model") && doc["model"].is_string() ? doc["model"].get<std::string>()
                                                                : "module";
    g.graph = r.block(r.field(doc, "graph", "document"), "graph", 0, {});
    return g;
}

}  // namespace anvil::frontend::pytorch
