#include "graph/passes/pass_table.h"

namespace anvil::graph {

namespace {

const GraphPassInfo kGraphPasses[] = {
    {"infer_types", infer_types},
    {"inline_composites", inline_composites},
    {"fake_quantization_to_integer", fake_quantization_to_integer},
    {"fold_qnn_quantize", fold_qnn_quantize},
    {"canonicalize_qnn", canonicalize_qnn},
    {"simplify_inference", simplify_inference},
    {"simplify_expr", simplify_expr},
    {"fold_constants", fold_constants},
    {"fold_scale_axis", fold_scale_axis},
    {"fuse_attention", fuse_attention},
    {"fuse_layer_norm", fuse_layer_norm},
    {"to_mixed_precision", to_mixed_precision},
    {"merge_composite", merge_composite},
    {"annotate_target", annotate_target},
    {"merge_compiler_regions", merge_compiler_regions},
    {"partition_graph", partition_graph},
    {"alter_op_layout", alter_op_layout},
    {"prepack_weights", prepack_weights},
    {"eliminate_common_subexpr", eliminate_common_subexpr},
    {"dead_code_elimination", dead_code_elimination},
    {"fuse_ops", fuse_ops},
};

}  // namespace

std::span<const GraphPassInfo> graph_passes() {
    return kGraphPasses;
}

const GraphPassInfo* find_graph_pass(std::string_view name) {
    for (const auto& p : kGraphPasses) {
        if (name == p.name) return &p;
    }
    return nullptr;
}

std::string graph_pass_list() {
    std::string list;
    for (const auto& p : kGraphPasses) list += (list.empty() ? "" : ", ") + std::string(p.name);
    return list;
}

}  // namespace anvil::graph
