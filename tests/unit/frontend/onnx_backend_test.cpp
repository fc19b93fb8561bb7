// The ONNX backend node tests (Debian's libonnx-testdata) as import tests: every single-op model
// whose op the importer converts must import, and its outputs must have the types of the
// reference outputs. Running them is tests/conformance' job.
#include <algorithm>

#include "frontend/onnx/converter.h"
#include "onnx_test_util.h"
#include "require_package.h"

namespace anvil::frontend {
namespace {

const char* kNodeTests = "/usr/share/libonnx-testdata/data/node";

// Node tests that exercise what the importer deliberately does not do, with the reason.
const std::map<std::string, std::string>& known_unsupported() {
    static const std::map<std::string, std::string> m = {
        {"test_training_dropout", "training mode"},
        {"test_training_dropout_default", "training mode"},
        {"test_training_dropout_default_mask", "training mode"},
        {"test_training_dropout_mask", "training mode"},
        {"test_training_dropout_zero_ratio", "training mode"},
        {"test_training_dropout_zero_ratio_mask", "training mode"},
        {"test_cast_FLOAT_to_STRING", "strings"},
        {"test_cast_STRING_to_FLOAT", "strings"},
        {"test_castlike_FLOAT_to_STRING_expanded", "strings"},
        {"test_castlike_STRING_to_FLOAT_expanded", "strings"},
        {"test_castlike_FLOAT_to_STRING", "strings"},
        {"test_castlike_STRING_to_FLOAT", "strings"},
        {"test_identity_opt", "optional values"},
        {"test_identity_sequence", "sequences"},
        {"test_resize_tf_crop_and_resize", "tf_crop_and_resize"},
        // The reference data of these stores bfloat16 as uint16.
        {"test_cast_FLOAT_to_BFLOAT16", "reference stored as uint16"},
        {"test_castlike_FLOAT_to_BFLOAT16_expanded", "reference stored as uint16"},
        {"test_castlike_FLOAT_to_BFLOAT16", "reference stored as uint16"},
        // The window length is computed by the graph, so the shape is known only at run time.
        {"test_blackmanwindow_expanded", "run-time shapes"},
        {"test_blackmanwindow_symmetric_expanded", "run-time shapes"},
        {"test_hammingwindow_expanded", "run-time shapes"},
        {"test_hammingwindow_symmetric_expanded", "run-time shapes"},
        {"test_hannwindow_expanded", "run-time shapes"},
        {"test_hannwindow_symmetric_expanded", "run-time shapes"},
        // The result's shape depends on the data.
        {"test_compress_0", "data-dependent shape"},
        {"test_compress_1", "data-dependent shape"},
        {"test_compress_default_axis", "data-dependent shape"},
        {"test_compress_negative_axis", "data-dependent shape"},
        {"test_nonzero_example", "data-dependent shape"},
        {"test_melweightmatrix", "run-time shapes"},
        {"test_strnormalizer_export_monday_casesensintive_lower", "data-dependent shape"},
        {"test_strnormalizer_export_monday_casesensintive_nochangecase", "data-dependent shape"},
        {"test_strnormalizer_export_monday_casesensintive_upper", "data-dependent shape"},
        {"test_strnormalizer_export_monday_empty_output", "data-dependent shape"},
        {"test_strnormalizer_export_monday_insensintive_upper_twodim", "data-dependent shape"},
        {"test_nonmaxsuppression_center_point_box_format", "data-dependent shape"},
        {"test_nonmaxsuppression_flipped_coordinates", "data-dependent shape"},
        {"test_nonmaxsuppression_identical_boxes", "data-dependent shape"},
        {"test_nonmaxsuppression_limit_output_size", "data-dependent shape"},
        {"test_nonmaxsuppression_single_box", "data-dependent shape"},
        {"test_nonmaxsuppression_suppress_by_IOU", "data-dependent shape"},
        {"test_nonmaxsuppression_suppress_by_IOU_and_scores", "data-dependent shape"},
        {"test_nonmaxsuppression_two_batches", "data-dependent shape"},
        {"test_nonmaxsuppression_two_classes", "data-dependent shape"},
        {"test_unique_not_sorted_without_axis", "data-dependent shape"},
        {"test_unique_sorted_with_axis", "data-dependent shape"},
        {"test_unique_sorted_with_axis_3d", "data-dependent shape"},
        {"test_unique_sorted_with_negative_axis", "data-dependent shape"},
        {"test_unique_sorted_without_axis", "data-dependent shape"},
        // A loop's iteration count is known only at run time.
        {"test_range_float_type_positive_delta_expanded", "run-time shapes"},
        {"test_range_int32_type_negative_delta_expanded", "run-time shapes"},
        // Control flow over values the importer does not support yet.
        {"test_if_opt", "optional values"},
        {"test_if_seq", "sequences"},
        {"test_loop13_seq", "sequences"},
        {"test_loop16_seq_none", "sequences"},
        {"test_loop11", "Slice with run-time starts"},
        {"test_scan_sum", "Scan before opset 9 (batched)"},
    };
    return m;
}

bool converts_all_ops(const ::onnx::ModelProto& m) {
    for (const auto& n : m.graph().node()) {
        bool found = false;
        for (const auto& c : converter_table()) found |= n.op_type() == c.op_type;
        if (!found || !(n.domain().empty() || n.domain() == "ai.onnx")) return false;
    }
    return m.graph().node_size() > 0;
}

// Graph inputs after the first (the data) that are integer tensors (shapes, axes, pads, ...)
// become initializers from the test data, as a deployed model has them.
void freeze_operand_inputs(::onnx::ModelProto& m, const std::filesystem::path& data) {
    auto* g = m.mutable_graph();
    // ConstantOfShape's, Range's and the window functions' operands are all shape operands.
    const std::string& op = g->node(0).op_type();
    int first = op == "ConstantOfShape" || op == "Range" || op.ends_with("Window") ? 0 : 1;
    for (int i = first; i < g->input_size(); ++i) {
        const auto& tt = g->input(i).type().tensor_type();
        int et = tt.elem_type();
        // Scalars (a pad value) and short vectors (Resize's scales) too.
        bool small =
            tt.has_shape() && (tt.shape().dim_size() == 0 ||
                               (tt.shape().dim_size() == 1 && tt.shape().dim(0).dim_value() <= 8));
        if (et != ::onnx::TensorProto::INT64 && et != ::onnx::TensorProto::INT32 && !small) {
            continue;
        }
        std::ifstream in(data / ("input_" + std::to_string(i) + ".pb"), std::ios::binary);
        ::onnx::TensorProto t;
        if (!in || !t.ParseFromIstream(&in)) continue;
        t.set_name(g->input(i).name());
        *g->add_initializer() = t;
    }
}

std::string type_of_pb(const std::filesystem::path& p) {
    runtime::NDArray a = read_tensor_pb(p.string());
    std::vector<int64_t> shape(a.shape().begin(), a.shape().end());
    return graph::type_str(graph::make_tensor_type(shape, graph::dtype_of(a.dtype())));
}

TEST(OnnxBackendNodes, ImportWithReferenceOutputTypes) {
    ANVIL_REQUIRE_ONNX_TESTDATA(std::filesystem::exists(kNodeTests));
    std::vector<std::filesystem::path> dirs;
    for (const auto& d : std::filesystem::directory_iterator(kNodeTests)) dirs.push_back(d.path());
    std::sort(dirs.begin(), dirs.end());
    int imported = 0;
    std::vector<std::string> failures;
    for (const auto& dir : dirs) {
        std::string name = dir.filename().string();
        if (known_unsupported().count(name)) continue;
        ::onnx::ModelProto m;
        std::ifstream in(dir / "model.onnx", std::ios::binary);
        if (!m.ParseFromIstream(&in) || !converts_all_ops(m)) continue;
        auto data = dir / "test_data_set_0";
        freeze_operand_inputs(m, data);
        try {
            graph::IRModule mod = from_onnx(m, {}, (dir / "model.onnx").string());
            graph::Expr body = mod.main()->body;
            std::vector<graph::Type> outs;
            if (const auto* t = body.as<graph::Tuple>()) {
                for (const auto& f : t->fields) outs.push_back(f->type);
            } else {
                outs.push_back(body->type);
            }
            for (size_t k = 0; k < outs.size(); ++k) {
                auto ref = data / ("output_" + std::to_string(k) + ".pb");
                // Sequences and optionals are compared by value in the conformance runner.
                if (!std::filesystem::exists(ref) || !outs[k].is<graph::TensorType>()) continue;
                std::string want = type_of_pb(ref), got = graph::type_str(outs[k]);
                if (want != got) {
                    failures.push_back(name + ": output " + std::to_string(k) + " is " + got +
                                       ", the reference " + want);
                }
            }
            ++imported;
        } catch (const Error& e) {
            failures.push_back(name + ": " + e.what());
        }
    }
    std::string all;
    for (const auto& f : failures) all += "\n  " + f;
    EXPECT_TRUE(failures.empty()) << failures.size() << " of " << imported + failures.size()
                                  << " node tests failed to import:" << all;
    EXPECT_GT(imported, 300);
}

}  // namespace
}  // namespace anvil::frontend
