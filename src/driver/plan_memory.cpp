#include "driver/plan_memory.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "support/error.h"

namespace anvil::driver {
namespace {

int64_t round_up(int64_t bytes) {
    return (bytes + ANVIL_TENSOR_ALIGNMENT - 1) / ANVIL_TENSOR_ALIGNMENT * ANVIL_TENSOR_ALIGNMENT;
}

std::string format_bytes(int64_t bytes) {
    char buf[32];
    if (bytes >= (int64_t{1} << 30))
        std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(int64_t{1} << 30));
    else if (bytes >= (1 << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1 << 20));
    else if (bytes >= (1 << 10))
        std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / double(1 << 10));
    else
        std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
    return buf;
}

}  // namespace

std::string MemoryPlan::summary() const {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%",
                  unshared_bytes ? 100.0 * planned_bytes / unshared_bytes : 100.0);
    return "planned " + format_bytes(planned_bytes) + " for " + format_bytes(unshared_bytes) +
           " of tensors (" + pct + ", " + std::to_string(storage_bytes.size()) + " buffers for " +
           std::to_string(storage_of.size()) + " tensors)";
}

MemoryPlan plan_memory(std::span<const TensorLifetime> tensors) {
    MemoryPlan plan;
    plan.storage_of.assign(tensors.size(), -1);
    std::vector<int> free_buffers;          // shareable buffers holding no live tensor
    std::vector<std::pair<int, int>> live;  // (last use, buffer) of shareable live tensors
    int previous_def = INT32_MIN;
    for (size_t i = 0; i < tensors.size(); ++i) {
        const TensorLifetime& t = tensors[i];
        if (t.bytes < 0) user_error() << "plan_memory: tensor " << i << " has negative size";
        if (t.def < previous_def) {
            user_error() << "plan_memory: tensor " << i << " is written at step " << t.def
                         << ", before the previous tensor (step " << previous_def
                         << "); give tensors in execution order";
        }
        previous_def = t.def;
        int64_t bytes = round_up(t.bytes);
        plan.unshared_bytes += bytes;

        // Buffers whose tensors were all last read before this step become free.
        std::erase_if(live, [&](const std::pair<int, int>& entry) {
            if (entry.first >= t.def) return false;
            free_buffers.push_back(entry.second);
            return true;
        });

        int chosen = -1;
        if (!t.external) {
            int64_t best_fit = INT64_MAX, largest = -1;
            int largest_buffer = -1;
            for (int b : free_buffers) {
                int64_t size = plan.storage_bytes[b];
                if (size >= bytes && size < best_fit) {
                    best_fit = size;
                    chosen = b;
                }
                if (size > largest) {
                    largest = size;
                    largest_buffer = b;
                }
            }
            if (chosen < 0 && largest_buffer >= 0) {
                chosen = largest_buffer;
                plan.storage_bytes[chosen] = bytes;
            }
            if (chosen >= 0) std::erase(free_buffers, chosen);
        }
        if (chosen < 0) {
            chosen = static_cast<int>(plan.storage_bytes.size());
            plan.storage_bytes.push_back(bytes);
        }
        plan.storage_of[i] = chosen;
        if (!t.external) live.emplace_back(std::max(t.last_use, t.def), chosen);
    }
    for (int64_t b : plan.storage_bytes) plan.planned_bytes += b;
    return plan;
}

void check_memory_limit(const MemoryPlan& plan, int64_t weight_bytes, int64_t limit) {
    if (limit <= 0) return;
    int64_t total = 0;
    bool overflows = __builtin_add_overflow(plan.planned_bytes, weight_bytes, &total);
    if (overflows || total > limit) {
        // An overflowing sum would print wrapped around (negative): say it is beyond 64 bits.
        std::string needs = overflows
                                ? "more than " + std::to_string(INT64_MAX) + " bytes"
                                : std::to_string(total) + " bytes (" + format_bytes(total) + ")";
        user_error() << "the model needs " << needs << ": " << plan.planned_bytes
                     << " bytes of planned intermediate tensors in " << plan.storage_bytes.size()
                     << " buffers and " << weight_bytes
                     << " bytes of weights; that exceeds the memory limit of " << limit
                     << " bytes (" << format_bytes(limit) << ", --max-memory)";
    }
}

int64_t parse_byte_size(const std::string& text, const std::string& what) {
    auto bad = [&](const std::string& why) {
        user_error() << what << ": '" << text << "' " << why
                     << " (a size in bytes, optionally with K, M, G or T: 512M, 2G, 1048576)";
    };
    size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
        ++digits;
    }
    if (digits == 0) bad("is not a size");
    std::string suffix;
    for (char ch : text.substr(digits)) suffix += static_cast<char>(std::toupper(ch));
    static const std::pair<const char*, int> kUnits[] = {
        {"", 0},     {"B", 0},  {"K", 10},  {"KB", 10},  {"KIB", 10}, {"M", 20},  {"MB", 20},
        {"MIB", 20}, {"G", 30}, {"GB", 30}, {"GIB", 30}, {"T", 40},   {"TB", 40}, {"TIB", 40}};
    int shift = -1;
    for (const auto& [name, s] : kUnits) {
        if (suffix == name) shift = s;
    }
    if (shift < 0) bad("has an unknown unit");
    int64_t value = 0;
    for (size_t i = 0; i < digits; ++i) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text[i] - '0', &value)) {
            bad("is too large");
        }
    }
    if (value > (INT64_MAX >> shift)) bad("is too large");
    if (value == 0) bad("is zero");
    return value << shift;
}

MemoryPlan plan_graph_memory(runtime::GraphPlan& plan) {
    using runtime::PlanNodeKind;
    // Tensor ids in execution order: (node, output) of every input node and kernel output.
    std::vector<std::vector<int>> tensor_id(plan.nodes.size());
    std::vector<TensorLifetime> lifetimes;
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
        const runtime::PlanNode& node = plan.nodes[i];
        tensor_id[i].assign(node.outputs.size(), -1);
        if (node.kind == PlanNodeKind::param) continue;
        for (size_t k = 0; k < node.outputs.size(); ++k) {
            int64_t bytes = node.outputs[k].nbytes();
            if (bytes < 0) {
                user_error() << "plan_graph_memory: node '" << node.name << "' output " << k
                             << " has an invalid shape";
            }
            tensor_id[i][k] = static_cast<int>(lifetimes.size());
            lifetimes.push_back({.bytes = bytes,
                                 .def = static_cast<int>(i),
                                 .last_use = -1,
                                 .external = node.kind == PlanNodeKind::input});
        }
    }
    auto tensor_of = [&](const runtime::PlanEntry& e) -> int {
        if (e.node < 0 || static_cast<size_t>(e.node) >= plan.nodes.size() || e.index < 0 ||
            static_cast<size_t>(e.index) >= tensor_id[e.node].size()) {
            user_error() << "plan_graph_memory: reference to a missing output [" << e.node << ", "
                         << e.index << "]";
        }
        return tensor_id[e.node][e.index];
    };
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
        for (const runtime::PlanEntry& a : plan.nodes[i].args) {
            int t = tensor_of(a);
            if (t >= 0)
                lifetimes[t].last_use = std::max(lifetimes[t].last_use, static_cast<int>(i));
        }
    }
    for (const runtime::PlanOutput& out : plan.outputs) {
        int t = tensor_of(out.entry);
        if (t >= 0) lifetimes[t].external = true;
    }
    MemoryPlan result = plan_memory(lifetimes);
    plan.storage.clear();
    for (size_t b = 0; b < result.storage_bytes.size(); ++b) {
        plan.storage.push_back({.id = static_cast<int>(b), .bytes = result.storage_bytes[b]});
    }
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
        for (size_t k = 0; k < plan.nodes[i].outputs.size(); ++k) {
            int t = tensor_id[i][k];
            plan.nodes[i].outputs[k].storage = t >= 0 ? result.storage_of[t] : -1;
        }
    }
    return result;
}

}  // namespace anvil::driver
