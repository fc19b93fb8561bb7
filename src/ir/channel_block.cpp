#include "ir/channel_block.h"

#include <initializer_list>

namespace anvil {

int64_t padded_channel_block(int64_t channels) {
    // Padded size with a penalty for narrower vectors (fewer flops per instruction).
    int64_t best = 32;
    double best_cost = 0;
    for (int64_t vb : {32, 16, 8}) {
        double penalty = vb == 32 ? 1.0 : vb == 16 ? 1.1 : 1.3;
        double cost = static_cast<double>((channels + vb - 1) / vb * vb) * penalty;
        if (vb == 32 || cost < best_cost) {
            best = vb;
            best_cost = cost;
        }
    }
    return best;
}

int64_t dividing_channel_block(int64_t channels, int64_t widest) {
    for (int64_t b : {32, 16, 8}) {
        if (b <= widest && channels % b == 0) return b;
    }
    return 0;
}

int64_t default_layout_block(int64_t channels) {
    return dividing_channel_block(channels, 16);
}

std::vector<int64_t> layout_block_choices(int64_t channels) {
    if (default_layout_block(channels) == 0) return {};
    std::vector<int64_t> choices = {0};
    for (int64_t b : {8, 16, 32}) {
        if (channels % b == 0) choices.push_back(b);
    }
    return choices;
}

}  // namespace anvil
