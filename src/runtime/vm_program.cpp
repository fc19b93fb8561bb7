#include "runtime/vm_program.h"

#include <set>
#include <unordered_map>

#include "runtime/json_reader.h"
#include "runtime/param_json.h"
#include "runtime/string_tensor.h"

namespace anvil::runtime {

namespace {

constexpr const char* kDocument = "vm program";

struct OpName {
    VMOp op;
    const char* name;
};
constexpr OpName kOpNames[] = {
    {VMOp::match_shape, "match_shape"},
    {VMOp::load_param, "load_param"},
    {VMOp::alloc, "alloc"},
    {VMOp::call_kernel, "call_kernel"},
    {VMOp::call_packed, "call_packed"},
    {VMOp::call_func, "call_func"},
    {VMOp::load_shape, "load_shape"},
    {VMOp::shape_tensor, "shape_tensor"},
    {VMOp::tuple, "tuple"},
    {VMOp::get_item, "get_item"},
    {VMOp::seq_length, "seq_length"},
    {VMOp::seq_at, "seq_at"},
    {VMOp::seq_insert, "seq_insert"},
    {VMOp::seq_erase, "seq_erase"},
    {VMOp::seq_split, "seq_split"},
    {VMOp::seq_concat, "seq_concat"},
    {VMOp::seq_stack, "seq_stack"},
    {VMOp::str_normalize, "str_normalize"},
    {VMOp::str_format, "str_format"},
    {VMOp::str_parse, "str_parse"},
    {VMOp::str_const, "str_const"},
    {VMOp::none, "none"},
    {VMOp::has_value, "has_value"},
    {VMOp::get_value, "get_value"},
    {VMOp::check_shape, "check_shape"},
    {VMOp::reshape, "reshape"},
    {VMOp::move, "move"},
    {VMOp::kill, "kill"},
    {VMOp::loop, "loop"},
    {VMOp::if_false, "if_false"},
    {VMOp::goto_, "goto"},
    {VMOp::ret, "ret"},
};

struct TokenName {
    ShapeToken::Kind kind;
    const char* name;
};
constexpr TokenName kTokenNames[] = {
    {ShapeToken::Kind::add, "+"},      {ShapeToken::Kind::sub, "-"},
    {ShapeToken::Kind::mul, "*"},      {ShapeToken::Kind::floordiv, "/"},
    {ShapeToken::Kind::floormod, "%"}, {ShapeToken::Kind::min, "min"},
    {ShapeToken::Kind::max, "max"},    {ShapeToken::Kind::eq, "=="},
    {ShapeToken::Kind::ne, "!="},      {ShapeToken::Kind::lt, "<"},
    {ShapeToken::Kind::le, "<="},      {ShapeToken::Kind::land, "&&"},
    {ShapeToken::Kind::lor, "||"},     {ShapeToken::Kind::select, "select"},
};

// How many values an operator token takes from the stack.
int operand_count(ShapeToken::Kind k) {
    return k == ShapeToken::Kind::select ? 3 : 2;
}

ShapeCode read_code(const Reader& r, const json& v) {
    if (!v.is_array()) r.fail("a shape expression must be a list of tokens, not " + v.dump());
    ShapeCode code;
    for (const json& t : v) {
        if (t.is_number_integer()) {
            code.push_back({ShapeToken::Kind::constant, t.get<int64_t>()});
            continue;
        }
        if (!t.is_string()) r.fail("bad shape token " + t.dump());
        std::string s = t.get<std::string>();
        if (s.size() > 1 && s[0] == '$') {
            try {
                code.push_back({ShapeToken::Kind::slot, std::stoll(s.substr(1))});
            } catch (const std::exception&) {
                r.fail("bad slot token '" + s + "'");
            }
            continue;
        }
        bool found = false;
        for (const auto& n : kTokenNames) {
            if (s == n.name) {
                code.push_back({n.kind, 0});
                found = true;
            }
        }
        if (!found) r.fail("unknown shape operator '" + s + "'");
    }
    return code;
}

// "$3": a slot in shape code's text. (Appended rather than `"$" + std::to_string(v)`, which
// GCC 12 misreads as an overlapping copy, -Wrestrict.)
std::string slot_text(int64_t slot) {
    std::string text = "$";
    text += std::to_string(slot);
    return text;
}

json code_json(const ShapeCode& code) {
    json out = json::array();
    for (const ShapeToken& t : code) {
        if (t.kind == ShapeToken::Kind::constant) {
            out.push_back(t.value);
        } else if (t.kind == ShapeToken::Kind::slot) {
            out.push_back(slot_text(t.value));
        } else {
            for (const auto& n : kTokenNames) {
                if (n.kind == t.kind) out.push_back(n.name);
            }
        }
    }
    return out;
}

std::vector<int> read_ints(const Reader& r, const json& obj, const char* key) {
    std::vector<int> out;
    for (const json& v : r.array(obj, key)) {
        if (!v.is_number_integer()) r.fail(std::string("'") + key + "' must hold integers");
        out.push_back(static_cast<int>(v.get<int64_t>()));
    }
    return out;
}

VMInstruction read_instruction(const Reader& r, const json& obj) {
    VMInstruction in;
    std::string op = r.string(obj, "op");
    bool known = false;
    for (const auto& n : kOpNames) {
        if (op == n.name) {
            in.op = n.op;
            known = true;
        }
    }
    if (!known) r.fail("unknown op '" + op + "'");
    auto opt_int = [&](const char* key, int* out) {
        if (obj.contains(key)) *out = r.small_int(obj, key);
    };
    auto opt_string = [&](const char* key, std::string* out) {
        if (obj.contains(key)) *out = r.string(obj, key);
    };
    opt_int("dst", &in.dst);
    opt_int("reg", &in.reg);
    if (obj.contains("args")) in.args = read_ints(r, obj, "args");
    if (obj.contains("slots")) in.slots = read_ints(r, obj, "slots");
    if (obj.contains("scan_ranks")) in.scan_ranks = read_ints(r, obj, "scan_ranks");
    if (obj.contains("scan_dtypes")) {
        for (const json& t : r.array(obj, "scan_dtypes")) {
            if (!t.is_string()) r.fail("bad scan dtype " + t.dump());
            try {
                in.scan_dtypes.push_back(dl_dtype_from_string(t.get<std::string>()));
            } catch (const UserError& e) {
                r.fail(e.what());
            }
        }
    }
    if (obj.contains("strings")) {
        for (const json& s : r.array(obj, "strings")) {
            if (!s.is_string()) r.fail("'strings' must hold strings");
            in.strings.push_back(s.get<std::string>());
        }
    }
    opt_string("name", &in.name);
    opt_string("node", &in.node);
    opt_string("what", &in.what);
    if (obj.contains("index")) in.index = r.integer(obj, "index");
    if (obj.contains("dtype")) in.dtype = r.dtype(obj);
    if (obj.contains("check_dtype")) {
        if (!obj["check_dtype"].is_boolean()) r.fail("'check_dtype' must be true or false");
        in.check_dtype = obj["check_dtype"].get<bool>();
    }
    if (obj.contains("shape")) {
        for (const json& d : r.array(obj, "shape")) in.shape.push_back(read_code(r, d));
    }
    if (obj.contains("variants")) {
        for (const json& v : r.array(obj, "variants")) {
            if (!v.is_object() || !v.contains("when")) {
                r.fail("a variant must be {\"kernel\": name, \"when\": code}, not " + v.dump());
            }
            in.variants.push_back({r.string(v, "kernel"), read_code(r, v["when"])});
        }
    }
    if (obj.contains("dims")) {
        for (const json& d : r.array(obj, "dims")) {
            DimMatch m;
            if (d.is_object() && d.contains("bind")) {
                m.bind_slot = r.small_int(d, "bind");
            } else if (d.is_object() && d.contains("check")) {
                m.check = read_code(r, d["check"]);
                if (m.check.empty()) r.fail("an empty check");
            } else if (d.is_object() && d.contains("any")) {
                // any size: no bind, no check
            } else {
                r.fail(
                    "a dim must be {\"bind\": slot}, {\"check\": code} or {\"any\": true}, "
                    "not " +
                    d.dump());
            }
            in.dims.push_back(std::move(m));
        }
    }
    return in;
}

json instruction_json(const VMInstruction& in) {
    json o;
    o["op"] = vm_op_name(in.op);
    if (in.dst >= 0) o["dst"] = in.dst;
    if (in.reg >= 0) o["reg"] = in.reg;
    if (!in.args.empty() || in.op == VMOp::call_kernel || in.op == VMOp::call_packed ||
        in.op == VMOp::call_func || in.op == VMOp::tuple || in.op == VMOp::kill ||
        in.op == VMOp::loop) {
        o["args"] = in.args;
    }
    if (in.op == VMOp::loop) {
        o["scan_ranks"] = in.scan_ranks;
        o["scan_dtypes"] = json::array();
        for (DLDataType t : in.scan_dtypes) o["scan_dtypes"].push_back(dl_dtype_to_string(t));
    }
    if (!in.slots.empty() || in.op == VMOp::load_shape || in.op == VMOp::reshape) {
        o["slots"] = in.slots;
    }
    if (in.op == VMOp::str_normalize || in.op == VMOp::str_const) o["strings"] = in.strings;
    if (!in.name.empty()) o["name"] = in.name;
    if (!in.node.empty()) o["node"] = in.node;
    if (!in.what.empty()) o["what"] = in.what;
    if (in.op == VMOp::get_item || in.op == VMOp::if_false || in.op == VMOp::goto_ ||
        in.op == VMOp::reshape || in.op == VMOp::loop || in.op == VMOp::seq_concat ||
        in.op == VMOp::seq_split || in.op == VMOp::seq_stack || in.op == VMOp::str_normalize ||
        ((in.op == VMOp::match_shape || in.op == VMOp::shape_tensor) && in.index != 0)) {
        o["index"] = in.index;
    }
    if (in.op == VMOp::alloc || in.op == VMOp::match_shape || in.op == VMOp::shape_tensor ||
        in.op == VMOp::str_parse) {
        o["dtype"] = dl_dtype_to_string(in.dtype);
    }
    if (in.op == VMOp::match_shape && !in.check_dtype) o["check_dtype"] = false;
    if (in.op == VMOp::alloc || in.op == VMOp::shape_tensor || in.op == VMOp::check_shape ||
        in.op == VMOp::loop || in.op == VMOp::str_const ||
        (in.op == VMOp::call_kernel && !in.shape.empty())) {
        o["shape"] = json::array();
        for (const auto& c : in.shape) o["shape"].push_back(code_json(c));
    }
    if (!in.variants.empty()) {
        o["variants"] = json::array();
        for (const auto& v : in.variants) {
            o["variants"].push_back({{"kernel", v.kernel}, {"when", code_json(v.when)}});
        }
    }
    if (in.op == VMOp::match_shape) {
        o["dims"] = json::array();
        for (const auto& d : in.dims) {
            if (d.bind_slot >= 0) {
                o["dims"].push_back({{"bind", d.bind_slot}});
            } else if (d.check.empty()) {
                o["dims"].push_back({{"any", true}});
            } else {
                o["dims"].push_back({{"check", code_json(d.check)}});
            }
        }
    }
    return o;
}

}  // namespace

const char* vm_op_name(VMOp op) {
    for (const auto& n : kOpNames) {
        if (n.op == op) return n.name;
    }
    return "?";
}

int64_t eval_shape_code(const ShapeCode& code, const std::vector<int64_t>& slots) {
    std::vector<int64_t> stack;
    for (const ShapeToken& t : code) {
        using K = ShapeToken::Kind;
        if (t.kind == K::constant) {
            stack.push_back(t.value);
            continue;
        }
        if (t.kind == K::slot) {
            if (t.value < 0 || t.value >= static_cast<int64_t>(slots.size())) {
                user_error() << "vm: shape slot " << t.value << " out of range";
            }
            stack.push_back(slots[t.value]);
            continue;
        }
        if (stack.size() < static_cast<size_t>(operand_count(t.kind))) {
            user_error() << "vm: malformed shape code " << shape_code_text(code);
        }
        if (t.kind == K::select) {
            int64_t otherwise = stack.back();
            stack.pop_back();
            int64_t then = stack.back();
            stack.pop_back();
            stack.back() = stack.back() != 0 ? then : otherwise;
            continue;
        }
        int64_t b = stack.back();
        stack.pop_back();
        int64_t a = stack.back();
        int64_t& out = stack.back();
        if ((t.kind == K::floordiv || t.kind == K::floormod) && b == 0) {
            user_error() << "vm: division by zero in the shape " << shape_code_text(code);
        }
        switch (t.kind) {
            case K::add:
                out = a + b;
                break;
            case K::sub:
                out = a - b;
                break;
            case K::mul:
                out = a * b;
                break;
            case K::floordiv:
                out = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
                break;
            case K::floormod:
                out = ((a % b) + b) % b;
                break;
            case K::min:
                out = std::min(a, b);
                break;
            case K::max:
                out = std::max(a, b);
                break;
            case K::eq:
                out = a == b;
                break;
            case K::ne:
                out = a != b;
                break;
            case K::lt:
                out = a < b;
                break;
            case K::le:
                out = a <= b;
                break;
            case K::land:
                out = a != 0 && b != 0;
                break;
            case K::lor:
                out = a != 0 || b != 0;
                break;
            default:
                break;
        }
    }
    if (stack.size() != 1) user_error() << "vm: malformed shape code " << shape_code_text(code);
    return stack[0];
}

std::string shape_code_text(const ShapeCode& code, const std::vector<std::string>& slot_names) {
    // Infix with full parentheses; leaves print bare.
    std::vector<std::string> stack;
    for (const ShapeToken& t : code) {
        using K = ShapeToken::Kind;
        if (t.kind == K::constant) {
            stack.push_back(std::to_string(t.value));
        } else if (t.kind == K::slot) {
            bool named = t.value >= 0 && t.value < static_cast<int64_t>(slot_names.size());
            stack.push_back(named ? slot_names[t.value] : slot_text(t.value));
        } else if (t.kind == K::select && stack.size() >= 3) {
            std::string otherwise = stack.back();
            stack.pop_back();
            std::string then = stack.back();
            stack.pop_back();
            stack.back() = "select(" + stack.back() + ", " + then + ", " + otherwise + ")";
        } else if (stack.size() >= 2) {
            std::string b = stack.back();
            stack.pop_back();
            std::string a = stack.back();
            const char* name = "?";
            for (const auto& n : kTokenNames) {
                if (n.kind == t.kind) name = n.name;
            }
            bool call = t.kind == K::min || t.kind == K::max;
            stack.back() = call ? std::string(name) + "(" + a + ", " + b + ")"
                                : "(" + a + " " + name + " " + b + ")";
        }
    }
    return stack.size() == 1 ? stack[0] : "<malformed>";
}

namespace {

VMProgram read_program(std::string_view text) {
    json doc = json::parse(text, nullptr, false);
    Reader top("document", kDocument);
    if (doc.is_discarded() || !doc.is_object()) top.fail("not a JSON object");
    if (top.integer(doc, "version") != VMProgram::kVersion) {
        top.fail("version " + doc["version"].dump() + " is not supported (expected " +
                 std::to_string(VMProgram::kVersion) + ")");
    }
    VMProgram p;
    const json& functions = top.array(doc, "functions");
    for (size_t i = 0; i < functions.size(); ++i) {
        Reader r("functions[" + std::to_string(i) + "]", kDocument);
        const json& f = functions[i];
        if (!f.is_object()) r.fail("a function must be an object");
        VMFunction fn;
        fn.name = r.string(f, "name");
        for (const json& n : r.array(f, "params")) {
            if (!n.is_string()) r.fail("'params' must hold names");
            fn.params.push_back(n.get<std::string>());
        }
        fn.num_registers = r.small_int(f, "num_registers");
        fn.num_slots = r.small_int(f, "num_slots");
        if (f.contains("slot_names")) {
            for (const json& n : r.array(f, "slot_names")) {
                if (!n.is_string()) r.fail("'slot_names' must hold names");
                fn.slot_names.push_back(n.get<std::string>());
            }
        }
        const json& code = r.array(f, "code");
        for (size_t k = 0; k < code.size(); ++k) {
            Reader ri("functions[" + std::to_string(i) + "] ('" + fn.name + "') code[" +
                          std::to_string(k) + "]",
                      kDocument);
            if (!code[k].is_object()) ri.fail("an instruction must be an object");
            fn.code.push_back(read_instruction(ri, code[k]));
        }
        p.functions.push_back(std::move(fn));
    }
    for (const json& n : top.array(doc, "outputs")) {
        if (!n.is_string()) top.fail("'outputs' must hold names");
        p.outputs.push_back(n.get<std::string>());
    }
    p.tuple_result = p.outputs.size() != 1;
    if (doc.contains("tuple_result")) {
        if (!doc["tuple_result"].is_boolean()) top.fail("'tuple_result' must be true or false");
        p.tuple_result = doc["tuple_result"].get<bool>();
    }
    if (doc.contains("params")) p.params = read_params(doc["params"], kDocument);
    validate_program(p);
    return p;
}

}  // namespace

VMProgram program_from_json(std::string_view text) {
    // The readers check each field's JSON type before reading it; this is the net for one they
    // miss (found by fuzzing: a string where a boolean belongs), which must still be the
    // document's fault, not a crash.
    try {
        return read_program(text);
    } catch (const json::exception& e) {
        user_error() << kDocument << ": malformed: " << e.what();
    }
    ANVIL_UNREACHABLE();
}

std::string program_to_json(const VMProgram& program, int indent) {
    json doc;
    doc["version"] = VMProgram::kVersion;
    doc["functions"] = json::array();
    for (const VMFunction& f : program.functions) {
        json fj{{"name", f.name},
                {"params", f.params},
                {"num_registers", f.num_registers},
                {"num_slots", f.num_slots},
                {"slot_names", f.slot_names},
                {"code", json::array()}};
        for (const auto& in : f.code) fj["code"].push_back(instruction_json(in));
        doc["functions"].push_back(std::move(fj));
    }
    doc["outputs"] = program.outputs;
    doc["tuple_result"] = program.tuple_result;
    doc["params"] = params_json(program.params);
    return doc.dump(indent);
}

void validate_program(const VMProgram& p, int64_t params_size) {
    validate_params(p.params, params_size, kDocument);
    if (p.functions.empty()) user_error() << kDocument << ": it has no functions";
    std::unordered_map<std::string, size_t> arity;
    for (const VMFunction& f : p.functions) {
        if (!arity.emplace(f.name, f.params.size()).second) {
            user_error() << kDocument << ": two functions are named '" << f.name << "'";
        }
    }
    for (size_t i = 0; i < p.functions.size(); ++i) {
        const VMFunction& f = p.functions[i];
        std::string fwhere = "functions[" + std::to_string(i) + "] ('" + f.name + "')";
        if (f.num_registers < static_cast<int>(f.params.size()) || f.num_slots < 0) {
            user_error() << kDocument << ": " << fwhere << ": too few registers for its params";
        }
        for (size_t k = 0; k < f.code.size(); ++k) {
            const VMInstruction& in = f.code[k];
            auto fail = [&](const std::string& what) {
                user_error() << kDocument << ": " << fwhere << " code[" << k << "] ("
                             << vm_op_name(in.op) << "): " << what;
            };
            auto check_reg = [&](int r, const char* role) {
                if (r < 0 || r >= f.num_registers) {
                    fail(std::string(role) + " register " + std::to_string(r) +
                         " out of range [0, " + std::to_string(f.num_registers) + ")");
                }
            };
            auto check_code = [&](const ShapeCode& c) {
                int depth = 0;
                for (const ShapeToken& t : c) {
                    if (t.kind == ShapeToken::Kind::slot &&
                        (t.value < 0 || t.value >= f.num_slots)) {
                        fail("slot " + std::to_string(t.value) + " out of range");
                    }
                    bool leaf =
                        t.kind == ShapeToken::Kind::constant || t.kind == ShapeToken::Kind::slot;
                    depth += leaf ? 1 : 1 - operand_count(t.kind);
                    if (depth < 1) fail("malformed shape code");
                }
                if (depth != 1) fail("malformed shape code");
            };
            if (!in.variants.empty() && in.op != VMOp::call_kernel) {
                fail("only call_kernel has variants");
            }
            switch (in.op) {
                case VMOp::match_shape: {
                    check_reg(in.reg, "source");
                    int64_t all = kMatchMayBeNone | kMatchSequence | kMatchAnyRank;
                    if (in.index < 0 || (in.index & ~all) != 0) fail("unknown match flags");
                    for (const auto& d : in.dims) {
                        if (d.bind_slot >= f.num_slots) fail("slot out of range");
                        if (d.bind_slot >= 0 && in.index != 0) {
                            fail("a sequence or an optional binds no dimension");
                        }
                        if (d.bind_slot < 0 && !d.check.empty()) check_code(d.check);
                    }
                    break;
                }
                case VMOp::load_param:
                    check_reg(in.dst, "destination");
                    if (!p.params.count(in.name)) fail("no param named '" + in.name + "'");
                    break;
                case VMOp::alloc:
                case VMOp::shape_tensor:
                case VMOp::str_const:
                    check_reg(in.dst, "destination");
                    if (in.op == VMOp::alloc && is_string_dtype(in.dtype)) {
                        fail("string tensors are made by string instructions, not allocated");
                    }
                    if (in.op == VMOp::shape_tensor &&
                        !(in.dtype.code == kDLInt &&
                          (in.dtype.bits == 32 || in.dtype.bits == 64))) {
                        fail("a shape tensor is int32 or int64");
                    }
                    if (in.op == VMOp::shape_tensor && in.index != 0 &&
                        (in.index != 1 || in.shape.size() != 1)) {
                        fail("a shape tensor's index is 0 (1-D) or 1 (0-D, of one value)");
                    }
                    for (const auto& c : in.shape) check_code(c);
                    break;
                case VMOp::call_kernel:
                case VMOp::call_packed:
                    for (int a : in.args) check_reg(a, "argument");
                    for (const auto& c : in.shape) check_code(c);
                    if (in.dst >= 0) check_reg(in.dst, "destination");
                    if (in.name.empty()) fail("no function name");
                    for (const auto& v : in.variants) {
                        if (v.kernel.empty()) fail("a variant without a kernel name");
                        check_code(v.when);
                    }
                    break;
                case VMOp::call_func: {
                    for (int a : in.args) check_reg(a, "argument");
                    check_reg(in.dst, "destination");
                    auto it = arity.find(in.name);
                    if (it == arity.end()) fail("no function named '" + in.name + "'");
                    if (it->second != in.args.size()) {
                        fail("'" + in.name + "' takes " + std::to_string(it->second) +
                             " arguments, given " + std::to_string(in.args.size()));
                    }
                    break;
                }
                case VMOp::loop: {
                    for (int a : in.args) check_reg(a, "argument");
                    check_reg(in.dst, "destination");
                    auto it = arity.find(in.name);
                    if (it == arity.end()) fail("no function named '" + in.name + "'");
                    int64_t carried = in.index;
                    if (in.args.size() < 2 || carried < 0 ||
                        carried > static_cast<int64_t>(in.args.size()) - 2 ||
                        it->second != in.args.size()) {
                        fail("a loop passes (max_trip, cond, carried..., constants...) to '" +
                             in.name + "', which takes " + std::to_string(it->second) +
                             " arguments");
                    }
                    size_t dims = 0;
                    if (in.scan_ranks.size() != in.scan_dtypes.size())
                        fail("scan_ranks and scan_dtypes disagree");
                    for (int r : in.scan_ranks) {
                        if (r < 0) fail("a negative rank");
                        dims += static_cast<size_t>(r);
                    }
                    if (dims != in.shape.size()) fail("ranks and shape disagree");
                    for (const auto& c : in.shape) check_code(c);
                    break;
                }
                case VMOp::load_shape:
                    check_reg(in.reg, "source");
                    for (int s : in.slots) {
                        if (s < 0 || s >= f.num_slots) fail("slot out of range");
                    }
                    break;
                case VMOp::check_shape:
                    if (in.shape.size() != 1) fail("a check has one condition");
                    check_code(in.shape[0]);
                    break;
                case VMOp::reshape:
                    check_reg(in.reg, "source");
                    check_reg(in.dst, "destination");
                    if (in.args.size() != 1) fail("reshape takes one shape tensor");
                    check_reg(in.args[0], "shape");
                    for (int s : in.slots) {
                        if (s < 0 || s >= f.num_slots) fail("slot out of range");
                    }
                    break;
                case VMOp::tuple:
                    for (int a : in.args) check_reg(a, "field");
                    check_reg(in.dst, "destination");
                    break;
                case VMOp::get_item:
                case VMOp::move:
                case VMOp::seq_length:
                case VMOp::seq_concat:
                case VMOp::seq_stack:
                case VMOp::has_value:
                case VMOp::get_value:
                case VMOp::str_format:
                    check_reg(in.reg, "source");
                    check_reg(in.dst, "destination");
                    break;
                case VMOp::str_normalize:
                    check_reg(in.reg, "source");
                    check_reg(in.dst, "destination");
                    if (in.name != "NONE" && in.name != "LOWER" && in.name != "UPPER") {
                        fail("the case change must be NONE, LOWER or UPPER, not '" + in.name + "'");
                    }
                    break;
                case VMOp::seq_split:
                    check_reg(in.reg, "source");
                    check_reg(in.dst, "destination");
                    if (in.args.size() > 1) fail("takes at most one argument, the split");
                    for (int a : in.args) check_reg(a, "argument");
                    if (in.index < 0) fail("the axis must be non-negative");
                    if (!in.name.empty() && (in.name != "squeeze" || !in.args.empty())) {
                        fail("name is empty, or \"squeeze\" without a split");
                    }
                    break;
                case VMOp::str_parse:
                    check_reg(in.reg, "source");
                    check_reg(in.dst, "destination");
                    if (is_string_dtype(in.dtype)) fail("parses strings into numbers, not strings");
                    break;
                case VMOp::seq_at:
                case VMOp::seq_insert:
                case VMOp::seq_erase: {
                    check_reg(in.reg, "sequence");
                    check_reg(in.dst, "destination");
                    size_t least = in.op == VMOp::seq_erase ? 0 : 1;
                    size_t most = in.op == VMOp::seq_at ? 1 : least + 1;
                    if (in.args.size() < least || in.args.size() > most) {
                        fail("takes " + std::to_string(least) + " to " + std::to_string(most) +
                             " argument(s)");
                    }
                    for (int a : in.args) check_reg(a, "argument");
                    break;
                }
                case VMOp::none:
                    check_reg(in.dst, "destination");
                    break;
                case VMOp::kill:
                    for (int a : in.args) check_reg(a, "killed");
                    break;
                case VMOp::if_false:
                case VMOp::goto_:
                    if (in.op == VMOp::if_false) check_reg(in.reg, "condition");
                    if (in.index < 0 || in.index > static_cast<int64_t>(f.code.size())) {
                        fail("jump target " + std::to_string(in.index) + " out of range");
                    }
                    break;
                case VMOp::ret:
                    check_reg(in.reg, "returned");
                    break;
            }
        }
        if (f.code.empty() || (f.code.back().op != VMOp::ret && f.code.back().op != VMOp::goto_)) {
            user_error() << kDocument << ": " << fwhere << ": its code does not end with ret";
        }
    }
}

}  // namespace anvil::runtime
