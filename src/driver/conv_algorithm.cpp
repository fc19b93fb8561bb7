#include "driver/conv_algorithm.h"

#include <algorithm>

#include "driver/workload_key.h"
#include "graph/attr_fields.h"
#include "graph/printer.h"
#include "ops/conv.h"

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

std::string conv2d_weight_block_key(const graph::Call& conv) {
    return std::string(kWorkloadKeyVersion) + " | conv2d weight block | " +
           graph::attrs_str(*conv.attrs, nullptr) + " " + graph::type_str(conv.args[0]->type) +
           " " + graph::type_str(conv.args[1]->type);
}

namespace {

// The weight's [O, C/groups, KH, KW] and the groups of an nn.conv2d with a static weight.
std::vector<int64_t> weight_geometry(const graph::Call& conv, int64_t* groups) {
    *groups = graph::attr_int(*conv.attrs, "groups").value_or(1);
    return conv.args[1]->type.as<graph::TensorType>()->static_shape();
}

}  // namespace

std::vector<int64_t> conv2d_weight_block_choices(const graph::Call& conv) {
    int64_t groups;
    std::vector<int64_t> w = weight_geometry(conv, &groups);
    return ops::conv2d_weight_block_choices(groups, w[0]);
}

int64_t default_conv2d_weight_block(const graph::Call& conv) {
    int64_t groups;
    std::vector<int64_t> w = weight_geometry(conv, &groups);
    return ops::conv2d_weight_block(groups, w[0], w[1], w[2], w[3]);
}

std::function<int64_t(const graph::Call&)> conv2d_weight_block_from_records(
    std::shared_ptr<const tune::BestRecords> records, const std::string& target) {
    if (!records) return nullptr;
    return [records, target](const graph::Call& conv) {
        const tune::TuningRecord* r = records->find(conv2d_weight_block_key(conv), target);
        if (!r) return int64_t{-1};
        auto it = r->config.find(kWeightBlockKnob);
        if (it == r->config.end()) return int64_t{-1};
        auto choices = conv2d_weight_block_choices(conv);
        bool valid = std::find(choices.begin(), choices.end(), it->second) != choices.end();
        return valid ? it->second : int64_t{-1};
    };
}

}  // namespace anvil::driver
