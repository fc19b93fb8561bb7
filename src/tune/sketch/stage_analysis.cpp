#include "tune/sketch/stage_analysis.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/expr_functor.h"
#include "ir/intrinsics.h"

namespace anvil::tune {

namespace {

// Math worth not computing twice: everything but the cheap rounding and sign functions.
bool expensive_call(const Call& c) {
    if (!intrin::is_math(c.name)) return false;
    return c.name != intrin::kAbs && c.name != intrin::kFloor && c.name != intrin::kCeil &&
           c.name != intrin::kRound && c.name != intrin::kFma;
}

bool plain_index(const PrimExpr& e) {
    return e.is<Var>() || e.is<IntImm>();
}

struct BodyFacts {
    std::vector<const Load*> loads;
    bool expensive = false;
};

BodyFacts body_facts(const PrimExpr& body) {
    BodyFacts f;
    pre_order_visit(body, [&](const PrimExpr& e) {
        if (auto* l = e.as<Load>()) f.loads.push_back(l);
        if (auto* c = e.as<Call>()) f.expensive = f.expensive || expensive_call(*c);
    });
    return f;
}

}  // namespace

std::vector<StageInfo> analyze_stages(const te::Schedule& s) {
    const auto& stages = s.stages();
    std::vector<StageInfo> out(stages.size());
    std::unordered_map<const Buffer*, int> stage_of_buffer;
    for (size_t i = 0; i < stages.size(); ++i) {
        stage_of_buffer[stages[i].op->buffer.get()] = static_cast<int>(i);
    }
    std::vector<BodyFacts> facts(stages.size());
    for (size_t i = 0; i < stages.size(); ++i) {
        const te::Stage& st = stages[i];
        StageInfo& info = out[i];
        info.name = st.name;
        info.placeholder = st.is_placeholder();
        info.output = st.is_output;
        auto* c = st.op.as<te::ComputeOp>();
        if (!c) continue;
        info.reduction = c->is_reduction();
        for (const auto& iv : c->axis) {
            auto* e = as_const_int(iv->dom.extent);
            info.static_extents = info.static_extents && e;
            info.extents.push_back(e ? *e : 0);
        }
        for (const auto& iv : c->reduce_axis) {
            auto* e = as_const_int(iv->dom.extent);
            info.static_extents = info.static_extents && e;
            info.reduce_extents.push_back(e ? *e : 0);
        }
        facts[i] = body_facts(c->body);
        info.loads = static_cast<int>(facts[i].loads.size());
        std::unordered_map<int, int> loads_of;
        std::unordered_set<int> reused;  // producers whose values this reduction reuses
        for (const Load* l : facts[i].loads) {
            auto it = stage_of_buffer.find(l->buffer.get());
            const int producer = it != stage_of_buffer.end() ? it->second : -1;
            if (producer >= 0) ++loads_of[producer];
            if (!info.reduction) continue;
            for (size_t d = 0; d < c->axis.size(); ++d) {
                bool used = false;
                for (const auto& idx : l->indices) {
                    used = used || uses_var(idx, c->axis[d]->var.get());
                }
                if (used) continue;
                info.data_reuse = true;
                // An axis of extent 1 repeats nothing.
                if (producer >= 0 && info.extents[d] != 1) reused.insert(producer);
            }
        }
        for (const auto& [producer, n] : loads_of) {
            out[producer].readers.push_back(static_cast<int>(i));
            out[producer].reads_per_reader.push_back(n);
            out[producer].reused_by_reader.push_back(reused.count(producer) > 0);
        }
    }
    for (size_t i = 0; i < stages.size(); ++i) {
        auto* c = stages[i].op.as<te::ComputeOp>();
        if (!c) continue;
        // Identity readers: every load of producer p in stage i is p[axis vars of i].
        std::unordered_map<int, bool> identity;
        for (const Load* l : facts[i].loads) {
            auto it = stage_of_buffer.find(l->buffer.get());
            if (it == stage_of_buffer.end()) continue;
            const int p = it->second;
            bool same = l->indices.size() == c->axis.size() && out[p].extents == out[i].extents &&
                        out[p].static_extents;
            for (size_t d = 0; same && d < l->indices.size(); ++d) {
                // A unit dimension is often indexed by the constant 0 (broadcasting rules).
                auto* zero = l->indices[d].as<IntImm>();
                same = l->indices[d].get() == c->axis[d]->var.get() ||
                       (out[i].extents[d] == 1 && zero && zero->value == 0);
            }
            auto [at, fresh] = identity.emplace(p, same);
            if (!fresh) at->second = at->second && same;
        }
        for (const auto& [p, same] : identity) {
            if (same) out[p].identity_readers.push_back(static_cast<int>(i));
        }
    }
    for (size_t i = 0; i < stages.size(); ++i) {
        StageInfo& info = out[i];
        if (info.placeholder || info.reduction || info.output) continue;
        bool plain = !facts[i].expensive;
        for (const Load* l : facts[i].loads) {
            for (const auto& idx : l->indices) plain = plain && plain_index(idx);
        }
        info.strictly_inlineable = plain;
        info.read_once = info.readers.size() == 1 && info.reads_per_reader[0] == 1;
    }
    return out;
}

}  // namespace anvil::tune
