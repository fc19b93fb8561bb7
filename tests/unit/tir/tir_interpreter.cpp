#include "tir_interpreter.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>

#include "ir/intrinsics.h"

namespace anvil::tir::testing {

namespace {

[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("interpreter: " + what);
}

// Wraps an integer to the width and signedness of `t` (bool becomes 0/1).
int64_t wrap(int64_t v, DataType t) {
    if (t.is_bool()) return v != 0;
    if (t.bits() >= 64) return v;
    uint64_t mask = (uint64_t{1} << t.bits()) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (t.is_uint()) return static_cast<int64_t>(u);
    uint64_t sign = uint64_t{1} << (t.bits() - 1);
    return static_cast<int64_t>((u ^ sign) - sign);
}

// Rounds a float result to the precision of `t`, as hardware float32 would.
double round_to(double v, DataType t) {
    if (t.bits() == 32) return static_cast<double>(static_cast<float>(v));
    return v;
}

Value make_value(DataType t) {
    Value v{t, {}, {}};
    if (t.is_floating()) {
        v.f.resize(t.lanes());
    } else {
        v.i.resize(t.lanes());
    }
    return v;
}

// Repeats a scalar to `lanes` lanes.
Value widen(const Value& v, int lanes) {
    if (v.lanes() == lanes) return v;
    if (v.lanes() != 1)
        fail("lane mismatch " + std::to_string(v.lanes()) + " vs " + std::to_string(lanes));
    Value out = make_value(v.dtype.with_lanes(lanes));
    for (int l = 0; l < lanes; ++l) {
        if (v.dtype.is_floating()) {
            out.f[l] = v.f[0];
        } else {
            out.i[l] = v.i[0];
        }
    }
    return out;
}

double call_math(const std::string& name, DataType t, const std::vector<double>& a) {
    bool f32 = t.bits() == 32;
    auto un = [&](float (*ff)(float), double (*fd)(double)) {
        return f32 ? static_cast<double>(ff(static_cast<float>(a[0]))) : fd(a[0]);
    };
    if (name == intrin::kExp) return un(std::exp, std::exp);
    if (name == intrin::kLog) return un(std::log, std::log);
    if (name == intrin::kSqrt) return un(std::sqrt, std::sqrt);
    if (name == intrin::kTanh) return un(std::tanh, std::tanh);
    if (name == intrin::kErf) return un(std::erf, std::erf);
    if (name == intrin::kFloor) return un(std::floor, std::floor);
    if (name == intrin::kCeil) return un(std::ceil, std::ceil);
    if (name == intrin::kAbs) return std::fabs(a[0]);
    if (name == intrin::kRound) return std::nearbyint(a[0]);
    if (name == intrin::kRsqrt) return round_to(1.0 / std::sqrt(a[0]), t);
    if (name == intrin::kSigmoid) return round_to(1.0 / (1.0 + std::exp(-a[0])), t);
    if (name == intrin::kPow) return round_to(std::pow(a[0], a[1]), t);
    if (name == intrin::kFma) return round_to(std::fma(a[0], a[1], a[2]), t);
    fail("unknown call " + name);
}

}  // namespace

double Value::as_double(int lane) const {
    return dtype.is_floating() ? f.at(lane) : static_cast<double>(i.at(lane));
}

int64_t Value::as_int(int lane) const {
    if (dtype.is_floating()) fail("integer expected, got " + dtype.str());
    return i.at(lane);
}

void Interpreter::bind_buffer(const Ref<Buffer>& b, std::vector<double>* data) {
    buffers_[b.get()] = data;
}

void Interpreter::bind_var(const Ref<Var>& v, Value value) {
    vars_[v.get()] = {std::move(value)};
}

void Interpreter::bind_int(const Ref<Var>& v, int64_t x) {
    Value val = make_value(v->dtype);
    val.i[0] = wrap(x, v->dtype);
    bind_var(v, val);
}

Value Interpreter::eval(const PrimExpr& e) {
    DataType t = e.dtype();
    Value out = make_value(t);
    int lanes = t.lanes();
    switch (e->kind) {
        case ExprKind::IntImm:
            out.i[0] = wrap(e.as<IntImm>()->value, t);
            return out;
        case ExprKind::FloatImm:
            out.f[0] = round_to(e.as<FloatImm>()->value, t);
            return out;
        case ExprKind::Var: {
            auto it = vars_.find(static_cast<const Var*>(e.get()));
            if (it == vars_.end() || it->second.empty()) fail("unbound variable " + to_string(e));
            return it->second.back();
        }
        case ExprKind::Not: {
            Value a = eval(e.as<Not>()->a);
            for (int l = 0; l < lanes; ++l) out.i[l] = !a.i[l];
            return out;
        }
        case ExprKind::Select: {
            auto* op = e.as<Select>();
            Value c = widen(eval(op->cond), lanes);
            Value a = eval(op->true_value), b = eval(op->false_value);
            return c.lanes() == 1 ? (c.i[0] ? a : b) : [&] {
                for (int l = 0; l < lanes; ++l) {
                    const Value& src = c.i[l] ? a : b;
                    if (t.is_floating()) {
                        out.f[l] = src.f[l];
                    } else {
                        out.i[l] = src.i[l];
                    }
                }
                return out;
            }();
        }
        case ExprKind::Cast: {
            Value a = eval(e.as<Cast>()->value);
            for (int l = 0; l < lanes; ++l) {
                if (t.is_floating()) {
                    out.f[l] = round_to(a.as_double(l), t);
                } else if (a.dtype.is_floating()) {
                    double d = a.f[l];
                    if (t.is_bool()) {
                        out.i[l] = d != 0;
                    } else {
                        if (!std::isfinite(d) || std::fabs(d) > 9.2e18)
                            fail("cast of " + std::to_string(d));
                        out.i[l] = wrap(static_cast<int64_t>(std::trunc(d)), t);
                    }
                } else {
                    out.i[l] = wrap(a.i[l], t);
                }
            }
            return out;
        }
        case ExprKind::Call: {
            auto* op = e.as<Call>();
            if (op->name == intrin::kIfThenElse) {
                // Evaluates only the chosen branch (which may read out of bounds otherwise).
                Value c = eval(op->args.at(0));
                if (c.dtype.is_scalar()) {
                    return widen(eval(op->args.at(c.as_int(0) != 0 ? 1 : 2)), lanes);
                }
                return eval_guarded(op, c, nullptr);
            }
            // A hint: its load is an address (maybe past the buffer's end), never read.
            if (op->name == intrin::kPrefetch) return out;
            if (intrin::is_amx(op->name)) {
                exec_amx(op);
                return out;
            }
            std::vector<Value> args;
            for (const auto& a : op->args) args.push_back(widen(eval(a), lanes));
            if (op->name == intrin::kLikely) return args.at(0);
            if (intrin::is_bitwise(op->name) || intrin::is_dot(op->name)) {
                return eval_packed(op, args);
            }
            if (op->name == intrin::kReinterpret) {
                const Value& a = args.at(0);
                if (a.dtype.bits() != t.bits()) fail("reinterpret changes width");
                for (int l = 0; l < lanes; ++l) {
                    if (t == DataType::uint(16) && a.dtype.is_bfloat()) {
                        // A bfloat16's bits: the upper half of its float32's.
                        out.i[l] = std::bit_cast<uint32_t>(static_cast<float>(a.f[l])) >> 16;
                    } else if (t.bits() == 32 && t.is_floating()) {
                        out.f[l] = std::bit_cast<float>(static_cast<uint32_t>(a.i[l]));
                    } else if (t.bits() == 32) {
                        out.i[l] = wrap(std::bit_cast<uint32_t>(static_cast<float>(a.f[l])), t);
                    } else if (t.is_floating()) {
                        out.f[l] = std::bit_cast<double>(a.i[l]);
                    } else {
                        out.i[l] = std::bit_cast<int64_t>(a.f[l]);
                    }
                }
                return out;
            }
            if (!intrin::is_math(op->name)) fail("unknown call " + op->name);
            for (int l = 0; l < lanes; ++l) {
                std::vector<double> a;
                for (const auto& v : args) a.push_back(v.as_double(l));
                if (t.is_floating()) {
                    out.f[l] = call_math(op->name, t, a);
                } else if (op->name == intrin::kAbs) {
                    out.i[l] = wrap(std::abs(args[0].i[l]), t);
                } else {
                    fail("integer " + op->name);
                }
            }
            return out;
        }
        case ExprKind::Load:
            return eval_load(e.as<Load>());
        case ExprKind::Ramp: {
            auto* op = e.as<Ramp>();
            Value b = eval(op->base), s = eval(op->stride);
            for (int l = 0; l < lanes; ++l) out.i[l] = wrap(b.i[0] + l * s.i[0], t);
            return out;
        }
        case ExprKind::Broadcast:
            return widen(eval(e.as<Broadcast>()->value), lanes);
        case ExprKind::Reduce:
            fail("Reduce in loop IR");
        default:
            break;
    }
    // Binary operators.
    auto* op = static_cast<const BinaryExpr*>(e.get());
    Value a = eval(op->a), b = eval(op->b);
    bool fl = a.dtype.is_floating();
    for (int l = 0; l < lanes; ++l) {
        if (fl) {
            double x = a.f[l], y = b.f[l];
            double r = 0;
            bool cmp = true;
            switch (e->kind) {
                case ExprKind::Add:
                    r = x + y;
                    cmp = false;
                    break;
                case ExprKind::Sub:
                    r = x - y;
                    cmp = false;
                    break;
                case ExprKind::Mul:
                    r = x * y;
                    cmp = false;
                    break;
                case ExprKind::Div:
                    r = x / y;
                    cmp = false;
                    break;
                case ExprKind::Min:
                    r = std::fmin(x, y);
                    cmp = false;
                    break;
                case ExprKind::Max:
                    r = std::fmax(x, y);
                    cmp = false;
                    break;
                case ExprKind::FloorDiv:
                    r = std::floor(x / y);
                    cmp = false;
                    break;
                case ExprKind::EQ:
                    out.i[l] = x == y;
                    break;
                case ExprKind::NE:
                    out.i[l] = x != y;
                    break;
                case ExprKind::LT:
                    out.i[l] = x < y;
                    break;
                case ExprKind::LE:
                    out.i[l] = x <= y;
                    break;
                case ExprKind::GT:
                    out.i[l] = x > y;
                    break;
                case ExprKind::GE:
                    out.i[l] = x >= y;
                    break;
                default:
                    fail(std::string("float ") + expr_kind_name(e->kind));
            }
            if (!cmp) out.f[l] = round_to(r, t);
            continue;
        }
        int64_t x = a.i[l], y = b.i[l], r = 0;
        // Wrapping arithmetic in unsigned to avoid C++ overflow UB.
        auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
        switch (e->kind) {
            case ExprKind::Add:
                r = static_cast<int64_t>(ux + uy);
                break;
            case ExprKind::Sub:
                r = static_cast<int64_t>(ux - uy);
                break;
            case ExprKind::Mul:
                r = static_cast<int64_t>(ux * uy);
                break;
            case ExprKind::Div:
            case ExprKind::Mod:
            case ExprKind::FloorDiv:
            case ExprKind::FloorMod: {
                if (y == 0) fail("division by zero in " + to_string(e));
                int64_t q = x / y, m = x % y;
                if (e->kind == ExprKind::Div) r = q;
                if (e->kind == ExprKind::Mod) r = m;
                bool adjust = m != 0 && ((m < 0) != (y < 0));
                if (e->kind == ExprKind::FloorDiv) r = adjust ? q - 1 : q;
                if (e->kind == ExprKind::FloorMod) r = adjust ? m + y : m;
                break;
            }
            case ExprKind::Min:
                r = std::min(x, y);
                break;
            case ExprKind::Max:
                r = std::max(x, y);
                break;
            case ExprKind::EQ:
                r = x == y;
                break;
            case ExprKind::NE:
                r = x != y;
                break;
            case ExprKind::LT:
                r = x < y;
                break;
            case ExprKind::LE:
                r = x <= y;
                break;
            case ExprKind::GT:
                r = x > y;
                break;
            case ExprKind::GE:
                r = x >= y;
                break;
            case ExprKind::And:
                r = x && y;
                break;
            case ExprKind::Or:
                r = x || y;
                break;
            default:
                fail(std::string("int ") + expr_kind_name(e->kind));
        }
        out.i[l] = wrap(r, t);
    }
    return out;
}

int64_t Interpreter::flat_offset(const Buffer* b, const std::vector<int64_t>& idx) {
    std::vector<int64_t> extents;
    for (const auto& d : b->shape) extents.push_back(eval(d).as_int(0));
    // One index into a multi-dimensional buffer is a row-major offset (flatten_storage keeps
    // parameters' declared shapes); it is checked against the whole buffer.
    if (idx.size() == 1 && extents.size() != 1) {
        int64_t size = 1;
        for (int64_t e : extents) size *= e;
        extents = {size};
    }
    if (idx.size() != extents.size() && !(idx.empty() && extents.empty())) {
        fail("wrong number of indices into " + b->name);
    }
    int64_t off = 0;
    for (size_t d = 0; d < extents.size(); ++d) {
        if (idx[d] < 0 || idx[d] >= extents[d]) {
            fail("index " + std::to_string(idx[d]) + " out of bounds [0, " +
                 std::to_string(extents[d]) + ") of " + b->name);
        }
        off = off * extents[d] + idx[d];
    }
    return off;
}

// A vector if_then_else, per lane. A guarded load reads only its chosen lanes (the code generator
// masks it), as does a load in the other branch with the negated guard, and a nested guarded
// if_then_else there only the lanes left to it; any other branch is safe to evaluate whole
// (vectorize_loops). `needed` (null: all) are the lanes an enclosing guard leaves to this one.
Value Interpreter::eval_guarded(const Call* op, const Value& c, const Value* needed) {
    int lanes = op->dtype.lanes();
    Value then_lanes = c, else_lanes = c;
    for (int l = 0; l < lanes; ++l) {
        bool want = !needed || needed->as_int(l) != 0;
        then_lanes.i[l] = want && c.as_int(l) != 0;
        else_lanes.i[l] = want && c.as_int(l) == 0;
    }
    auto branch = [&](const PrimExpr& e, const Value& mask) {
        if (auto* load = e.as<Load>(); load && load->dtype.is_vector())
            return eval_load(load, &mask);
        auto* nested = e.as<Call>();
        if (nested && nested->name == intrin::kIfThenElse) {
            Value nc = eval(nested->args.at(0));
            if (nc.dtype.is_vector()) return eval_guarded(nested, nc, &mask);
        }
        return widen(eval(e), lanes);
    };
    Value chosen = branch(op->args.at(1), then_lanes);
    Value otherwise = branch(op->args.at(2), else_lanes);
    Value out = make_value(op->dtype);
    for (int l = 0; l < lanes; ++l) {
        const Value& from = c.as_int(l) != 0 ? chosen : otherwise;
        if (op->dtype.is_floating()) {
            out.f[l] = from.f[l];
        } else {
            out.i[l] = from.i[l];
        }
    }
    return out;
}

Value Interpreter::eval_load(const Load* op, const Value* mask) {
    auto it = buffers_.find(op->buffer.get());
    if (it == buffers_.end()) fail("unbound buffer " + op->buffer->name);
    int lanes = op->dtype.lanes();
    std::vector<Value> idx;
    for (const auto& i : op->indices) idx.push_back(widen(eval(i), lanes));
    Value out = make_value(op->dtype);
    for (int l = 0; l < lanes; ++l) {
        if (mask && mask->as_int(l) == 0) continue;
        std::vector<int64_t> at;
        for (const auto& v : idx) at.push_back(v.as_int(l));
        double d = it->second->at(flat_offset(op->buffer.get(), at));
        if (op->dtype.is_floating()) {
            out.f[l] = d;
        } else {
            out.i[l] = static_cast<int64_t>(d);
        }
    }
    return out;
}

void Interpreter::exec_store(const Store* op) {
    auto it = buffers_.find(op->buffer.get());
    if (it == buffers_.end()) fail("unbound buffer " + op->buffer->name);
    Value v = eval(op->value);
    int lanes = v.lanes();
    std::vector<Value> idx;
    for (const auto& i : op->indices) idx.push_back(widen(eval(i), lanes));
    for (int l = 0; l < lanes; ++l) {
        std::vector<int64_t> at;
        for (const auto& x : idx) at.push_back(x.as_int(l));
        it->second->at(flat_offset(op->buffer.get(), at)) = v.as_double(l);
    }
}

void Interpreter::run(const Stmt& s) {
    ++steps_;
    switch (s->kind) {
        case StmtKind::LetStmt: {
            auto* op = s.as<LetStmt>();
            auto& stack = vars_[op->var.get()];
            stack.push_back(eval(op->value));
            run(op->body);
            vars_[op->var.get()].pop_back();
            return;
        }
        case StmtKind::For: {
            auto* op = s.as<For>();
            int64_t mn = eval(op->min).as_int(0), ext = eval(op->extent).as_int(0);
            for (int64_t k = mn; k < mn + ext; ++k) {
                Value v = make_value(op->var->dtype);
                v.i[0] = k;
                vars_[op->var.get()].push_back(v);
                run(op->body);
                vars_[op->var.get()].pop_back();
            }
            return;
        }
        case StmtKind::Store:
            exec_store(s.as<Store>());
            return;
        case StmtKind::Allocate: {
            auto* op = s.as<Allocate>();
            int64_t size = 1;
            for (const auto& d : op->buffer->shape) size *= eval(d).as_int(0);
            // Undefined contents: NaN for floats makes a read-before-write visible.
            std::vector<double> storage(size, op->buffer->dtype.is_floating() ? NAN : -12345.0);
            auto& slot = buffers_[op->buffer.get()];
            std::vector<double>* saved = slot;
            slot = &storage;
            run(op->body);
            buffers_[op->buffer.get()] = saved;
            return;
        }
        case StmtKind::IfThenElse: {
            auto* op = s.as<IfThenElse>();
            if (eval(op->cond).as_int(0)) {
                run(op->then_case);
            } else if (op->else_case.defined()) {
                run(op->else_case);
            }
            return;
        }
        case StmtKind::Evaluate:
            eval(s.as<Evaluate>()->value);
            return;
        case StmtKind::SeqStmt:
            for (const auto& c : s.as<SeqStmt>()->seq) run(c);
            return;
        case StmtKind::AssertStmt: {
            auto* op = s.as<AssertStmt>();
            Value c = eval(op->cond);
            int failing = -1;  // the first lane that fails, as the code generator reports it
            for (int l = 0; l < c.lanes() && failing < 0; ++l) {
                if (!c.as_int(l)) failing = l;
            }
            if (failing >= 0) {
                std::string message;
                size_t start = 0, arg = 0;
                for (size_t k = op->message.find("{}"); k != std::string::npos;
                     k = op->message.find("{}", start)) {
                    Value v = eval(op->message_args.at(arg++));
                    message += op->message.substr(start, k - start) +
                               std::to_string(v.as_int(v.lanes() > 1 ? failing : 0));
                    start = k + 2;
                }
                fail("assertion: " + message + op->message.substr(start));
            }
            if (op->body.defined()) run(op->body);
            return;
        }
        case StmtKind::CallPacked:
            // Buffers here are doubles, not the tensors a registered function expects.
            fail("call_packed(\"" + s.as<CallPacked>()->func + "\") is not interpreted");
    }
}

namespace {

int64_t buffer_size(Interpreter& in, const Ref<Buffer>& b) {
    int64_t size = 1;
    for (const auto& d : b->shape) size *= in.eval(d).as_int(0);
    return size;
}

void bind_scalars(Interpreter& in, const Ref<PrimFunc>& f, const std::vector<int64_t>& args) {
    if (args.size() != f->scalar_params.size()) fail("wrong number of scalar arguments");
    for (size_t k = 0; k < args.size(); ++k) in.bind_int(f->scalar_params[k], args[k]);
}

}  // namespace

std::vector<std::vector<double>> make_inputs(const Ref<PrimFunc>& f,
                                             const std::vector<int64_t>& scalar_args,
                                             uint64_t seed) {
    Interpreter in;
    bind_scalars(in, f, scalar_args);
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
    auto next = [&] {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<double>(state >> 40) / static_cast<double>(1ull << 24);  // [0, 1)
    };
    std::vector<std::vector<double>> out;
    for (const auto& b : f->params) {
        std::vector<double> data(buffer_size(in, b));
        for (auto& d : data) {
            d = b->dtype.is_floating() ? static_cast<float>(next() * 8 - 4)
                                       : std::floor(next() * 100 - 50);
        }
        out.push_back(std::move(data));
    }
    return out;
}

std::vector<std::vector<double>> run_func(const Ref<PrimFunc>& f,
                                          std::vector<std::vector<double>> inputs,
                                          const std::vector<int64_t>& scalar_args) {
    Interpreter in;
    bind_scalars(in, f, scalar_args);
    if (inputs.size() != f->params.size()) fail("wrong number of buffers");
    for (size_t k = 0; k < inputs.size(); ++k) {
        if (static_cast<int64_t>(inputs[k].size()) != buffer_size(in, f->params[k])) {
            fail("buffer " + f->params[k]->name + " has the wrong size");
        }
        in.bind_buffer(f->params[k], &inputs[k]);
    }
    in.run(f->body);
    return inputs;
}

std::string compare_buffers(const std::vector<std::vector<double>>& a,
                            const std::vector<std::vector<double>>& b) {
    if (a.size() != b.size()) return "different buffer counts";
    for (size_t k = 0; k < a.size(); ++k) {
        if (a[k].size() != b[k].size()) return "buffer " + std::to_string(k) + ": sizes differ";
        for (size_t j = 0; j < a[k].size(); ++j) {
            double x = a[k][j], y = b[k][j];
            if (std::memcmp(&x, &y, sizeof x) == 0 || (std::isnan(x) && std::isnan(y))) continue;
            std::ostringstream os;
            os << "buffer " << k << " element " << j << ": " << x << " vs " << y;
            return os.str();
        }
    }
    return "";
}

}  // namespace anvil::tir::testing
