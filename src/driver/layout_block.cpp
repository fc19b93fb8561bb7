#include "driver/layout_block.h"

#include <map>

#include "driver/workload_key.h"
#include "graph/printer.h"

namespace anvil::driver {

std::string layout_block_key(int64_t channels, const std::vector<const graph::Call*>& convs) {
    // Each distinct convolution with its count: a choice's cost is of that many of them, so
    // ResNet-50 and ResNet-101, with the same layers in other numbers, do not share records.
    std::map<std::string, int> described;
    for (const graph::Call* c : convs) {
        ++described[graph::attrs_str(*c->attrs, nullptr) + " " + graph::type_str(c->args[0]->type) +
                    " " + graph::type_str(c->args[1]->type)];
    }
    std::string key = std::string(kWorkloadKeyVersion) + " | layout block | channels " +
                      std::to_string(channels) + " |";
    const char* separator = " ";
    for (const auto& [conv, count] : described) {
        key += separator + std::to_string(count) + " x " + conv;
        separator = " ; ";
    }
    return key;
}

std::function<int64_t(int64_t, const std::vector<const graph::Call*>&, const std::vector<int64_t>&)>
layout_block_from_records(std::shared_ptr<const tune::BestRecords> records,
                          const std::string& target) {
    if (!records) return nullptr;
    return [records, target](int64_t channels, const std::vector<const graph::Call*>& convs,
                             const std::vector<int64_t>&) {
        const tune::TuningRecord* r = records->find(layout_block_key(channels, convs), target);
        if (!r) return int64_t{-1};
        auto it = r->config.find(kLayoutBlockKnob);
        return it == r->config.end() ? int64_t{-1} : it->second;
    };
}

}  // namespace anvil::driver
