// Bundled models from the runtime's side: an executor made from a hand-written AnvilBundle (the
// descriptor anvil compile --bundle writes) runs its kernel with the parameters read in place, and
// descriptors this runtime cannot read are refused with a message, through the C API too.
#include "runtime/bundle_module.h"

#include <gtest/gtest.h>

#include <cstring>

#include "add_plan.h"
#include "runtime/graph_executor.h"

namespace anvil::runtime {
namespace {

// kAddPlan's kernel "k": y = x + w over six floats, in the packed C convention.
int add_kernel(const AnvilValue* args, const int*, int num_args, AnvilValue*, int*, void*) {
    if (num_args != 3) return -1;
    const auto* a = static_cast<const float*>(static_cast<DLTensor*>(args[0].v_handle)->data);
    const auto* b = static_cast<const float*>(static_cast<DLTensor*>(args[1].v_handle)->data);
    auto* out = static_cast<float*>(static_cast<DLTensor*>(args[2].v_handle)->data);
    for (int i = 0; i < 6; ++i) out[i] = a[i] + b[i];
    return 0;
}

alignas(ANVIL_TENSOR_ALIGNMENT) const float kWeights[6] = {10, 20, 30, 40, 50, 60};
const AnvilBundleFunction kFunctions[] = {{"k", add_kernel}};

AnvilBundle good_bundle() {
    return AnvilBundle{.version = ANVIL_BUNDLE_VERSION,
                       .size = sizeof(AnvilBundle),
                       .functions = kFunctions,
                       .num_functions = 1,
                       .plan_json = kAddPlan,
                       .plan_size = std::strlen(kAddPlan),
                       .params = kWeights,
                       .params_size = sizeof kWeights,
                       .release_packed_functions = nullptr};
}

std::string error_of(const AnvilBundle& bundle) {
    try {
        GraphExecutor::from_bundle(bundle);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(BundleModule, RunsTheBundlesKernelsOnItsParametersInPlace) {
    AnvilBundle bundle = good_bundle();
    GraphExecutor ex = GraphExecutor::from_bundle(bundle);
    EXPECT_EQ(ex.module().type_key(), "bundle");
    EXPECT_EQ(ex.get_param("w").raw_data(), static_cast<const void*>(kWeights));
    NDArray x = NDArray::empty({2, 3}, {kDLFloat, 32, 1});
    x.copy_from(std::vector<float>{1, 2, 3, 4, 5, 6});
    ex.set_input(0, x);
    ex.run();
    EXPECT_EQ(ex.get_output(0).to_vector<float>(), (std::vector<float>{11, 22, 33, 44, 55, 66}));

    AnvilGraphExecutorHandle h = nullptr;
    ASSERT_EQ(anvil_graph_executor_create_from_bundle(&bundle, &h), 0) << anvil_get_last_error();
    EXPECT_EQ(anvil_graph_executor_free(h), 0);
}

TEST(BundleModule, DescriptorsThisRuntimeCannotReadAreRefused) {
    AnvilBundle old = good_bundle();
    old.version = 0;
    EXPECT_NE(error_of(old).find("the bundle was made for another runtime (bundle version 0"),
              std::string::npos);
    AnvilBundle smaller = good_bundle();
    smaller.size = 8;
    EXPECT_NE(error_of(smaller).find("size 8; this runtime reads version 1"), std::string::npos);
    AnvilBundle no_plan = good_bundle();
    no_plan.plan_json = nullptr;
    EXPECT_NE(error_of(no_plan).find("the bundle's descriptor is incomplete"), std::string::npos);
    AnvilBundleFunction nameless[] = {{nullptr, add_kernel}};
    AnvilBundle bad_function = good_bundle();
    bad_function.functions = nameless;
    EXPECT_EQ(error_of(bad_function), "the bundle's function 0 has no name or no code");
    AnvilBundle no_kernel = good_bundle();
    no_kernel.num_functions = 0;
    EXPECT_NE(error_of(no_kernel).find("cannot run the bundled model: "), std::string::npos);

    AnvilGraphExecutorHandle h = nullptr;
    EXPECT_EQ(anvil_graph_executor_create_from_bundle(&old, &h), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("made for another runtime"),
              std::string::npos);
    EXPECT_EQ(anvil_graph_executor_create_from_bundle(nullptr, &h), -1);
    EXPECT_STREQ(anvil_get_last_error(), "anvil_graph_executor_create_from_bundle: bundle is NULL");
}

}  // namespace
}  // namespace anvil::runtime
