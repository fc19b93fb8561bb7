#include "driver/conv_algorithm.h"

#include "driver/workload_key.h"
#include "graph/printer.h"

namespace anvil::driver {

std::string conv2d_algorithm_key(const graph::Call& conv, int64_t in_block, int64_t out_block) {
    return std::string(kWorkloadKeyVersion) + " | conv2d algorithm | " +
           graph::attrs_str(*conv.attrs, nullptr) + " " + graph::type_str(conv.args[0]->type) +
           " " + graph::type_str(conv.args[1]->type) + " blocks " + std::to_string(in_block) + "/" +
           std::to_string(out_block);
}

std::function<int(const graph::Call&, int64_t, int64_t)> conv2d_algorithm_from_records(
    std::shared_ptr<const tune::BestRecords> records, const std::string& target) {
    if (!records) return nullptr;
    return [records, target](const graph::Call& conv, int64_t in_block, int64_t out_block) {
        const tune::TuningRecord* r =
            records->find(conv2d_algorithm_key(conv, in_block, out_block), target);
        if (!r) return 0;
        auto it = r->config.find(kAlgorithmKnob);
        return it == r->config.end() ? 0 : static_cast<int>(it->second);
    };
}

}  // namespace anvil::driver
