// The shared models (ResNet-18, MobileNetV2) import with the expected signature, constants and
// ops; their test data reads with read_tensor_pb.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "onnx_test_util.h"
#include "require_package.h"

namespace anvil::frontend {
namespace {

std::string model_path(const std::string& name) {
    return testing::models_dir() + "/" + name + "/model.onnx";
}

#define ANVIL_NEED_MODEL(name)                                                                   \
    ANVIL_REQUIRE_PACKAGE(testing::have_model(name), "model " << name << " of ../shared/models", \
                          "check out the shared/ folder beside the repository")

TEST(OnnxModels, ResNet18) {
    ANVIL_NEED_MODEL("resnet18");
    graph::IRModule mod = from_onnx(model_path("resnet18"));
    const auto& fn = *mod.main();
    ASSERT_EQ(fn.params.size(), 1u);
    EXPECT_EQ(fn.params[0]->name, "input");
    EXPECT_EQ(graph::type_str(fn.params[0]->type), "Tensor[(1, 3, 224, 224), float32]");
    EXPECT_EQ(graph::type_str(fn.body->type), "Tensor[(1, 1000), float32]");
    // 20 conv weights, 20 x 4 batch-norm tensors, the fc weight and bias.
    EXPECT_EQ(testing::count_constants(fn), 102);
    auto hist = testing::op_histogram(fn);
    EXPECT_EQ(hist["nn.conv2d"], 20);
    EXPECT_EQ(hist["nn.batch_norm"], 20);
    EXPECT_EQ(hist["nn.relu"], 17);
    EXPECT_EQ(hist["add"], 8);  // the residual adds
    EXPECT_EQ(hist["nn.bias_add"], 1);
    EXPECT_EQ(hist["nn.max_pool2d"], 1);
    EXPECT_EQ(hist["nn.global_avg_pool2d"], 1);
    EXPECT_EQ(hist["flatten"], 1);
    EXPECT_EQ(hist["nn.dense"], 1);
}

TEST(OnnxModels, MobileNetV2) {
    ANVIL_NEED_MODEL("mobilenet_v2");
    graph::IRModule mod = from_onnx(model_path("mobilenet_v2"));
    const auto& fn = *mod.main();
    ASSERT_EQ(fn.params.size(), 1u);
    EXPECT_EQ(graph::type_str(fn.body->type), "Tensor[(1, 1000), float32]");
    // Clip's constant bounds become clip attributes, not graph constants.
    EXPECT_EQ(testing::count_constants(fn), 262);
    auto hist = testing::op_histogram(fn);
    EXPECT_EQ(hist["nn.conv2d"], 52);
    EXPECT_EQ(hist["nn.batch_norm"], 52);
    EXPECT_EQ(hist["clip"], 35);
    EXPECT_EQ(hist["add"], 10);
    EXPECT_EQ(hist["nn.bias_add"], 1);
    EXPECT_EQ(hist["nn.global_avg_pool2d"], 1);
    EXPECT_EQ(hist["nn.dense"], 1);
}

TEST(OnnxModels, InputShapeOverride) {
    ANVIL_NEED_MODEL("resnet18");
    ImportOptions opts;
    opts.input_shapes["input"] = {4, 3, 160, 160};
    graph::IRModule mod = from_onnx(model_path("resnet18"), opts);
    EXPECT_EQ(graph::type_str(mod.main()->params[0]->type), "Tensor[(4, 3, 160, 160), float32]");
    EXPECT_EQ(graph::type_str(mod.main()->body->type), "Tensor[(4, 1000), float32]");
}

TEST(OnnxModels, ReadTensorPb) {
    ANVIL_NEED_MODEL("resnet18");
    std::string dir = testing::models_dir() + "/resnet18/test_data_set_0/";
    runtime::NDArray in = read_tensor_pb(dir + "input_0.pb");
    EXPECT_EQ(in.str(), "float32[1, 3, 224, 224]");
    runtime::NDArray out = read_tensor_pb(dir + "output_0.pb");
    EXPECT_EQ(out.str(), "float32[1, 1000]");
    // Real data, not zeros.
    auto v = in.to_vector<float>();
    double sum = 0;
    for (float x : v) sum += std::abs(x);
    EXPECT_GT(sum, 0);
}

// Every *.onnx under $ANVIL_ONNX_MODELS_DIR (for models exported locally, e.g. torchvision's at
// opset 13), by default under tests/models (the generated models), imports; the output type and
// op histogram of each are printed.
TEST(OnnxModels, EveryModelInDirectory) {
    const char* env = std::getenv("ANVIL_ONNX_MODELS_DIR");
    std::string dir = env ? env : std::string(ANVIL_SOURCE_DIR) + "/tests/models";
    std::vector<std::filesystem::path> paths;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
        if (e.path().extension() == ".onnx") paths.push_back(e.path());
    }
    ASSERT_FALSE(paths.empty()) << "no .onnx file under " << dir;
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
        try {
            graph::IRModule mod = from_onnx(p.string());
            std::string ops;
            for (const auto& [op, n] : testing::op_histogram(*mod.main())) {
                ops += " " + op + "=" + std::to_string(n);
            }
            std::cout << p.string() << ": " << graph::type_str(mod.main()->body->type) << "\n   "
                      << ops << "\n";
        } catch (const Error& e) {
            ADD_FAILURE() << e.what();
        }
    }
}

}  // namespace
}  // namespace anvil::frontend
