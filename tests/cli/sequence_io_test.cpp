// `anvil run` on models that take or give ONNX sequences and optionals: test_data_set inputs that
// are SequenceProtos and OptionalProtos, compared element by element against the reference; in
// .npz files a sequence's tensors are NAME/0, NAME/1, ... and an empty optional is no array.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_run.h"
#include "require_package.h"
#include "runtime/npz.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;
using cli::testing::compile_and_compare;
using cli::testing::Result;
using cli::testing::run;
using cli::testing::temp_path;
using cli::testing::temp_so;
using runtime::NDArray;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

class SequenceModels : public ::testing::TestWithParam<std::string> {};

TEST_P(SequenceModels, CompileRunCompare) {
    fs::path dir = kNodeTests / GetParam();
    ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(dir));
    compile_and_compare(dir, 3);
}

// Sequences in and out, an optional sequence in and out, an empty optional in.
INSTANTIATE_TEST_SUITE_P(SequencesAndOptionals, SequenceModels,
                         ::testing::Values("test_sequence_insert_at_back",
                                           "test_sequence_map_add_2_sequences",
                                           "test_optional_get_element_sequence",
                                           "test_loop16_seq_none",
                                           "test_optional_has_element_empty"));

NDArray int64s(std::vector<int64_t> values) {
    NDArray a = NDArray::empty({static_cast<int64_t>(values.size())}, {kDLInt, 64, 1});
    a.copy_from(values);
    return a;
}

// Runs `so` on the .npz of `inputs`; the arrays it wrote to --outputs.
std::vector<std::pair<std::string, NDArray>> run_npz(
    const std::string& so, const std::vector<std::pair<std::string, NDArray>>& inputs,
    Result* result) {
    std::string in = temp_path("seq_in", ".npz"), out = temp_path("seq_out", ".npz");
    runtime::write_npz(in, inputs);
    fs::remove(out);
    *result = run("run " + so + " --inputs " + in + " --outputs " + out);
    std::vector<std::pair<std::string, NDArray>> arrays;
    if (result->status == 0) arrays = runtime::read_npz(out);
    fs::remove(in);
    fs::remove(out);
    return arrays;
}

class SequenceNpz : public ::testing::Test {
protected:
    void SetUp() override { ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(kNodeTests)); }
    // Compiles a node test's model; removed with the fixture.
    std::string compile(const std::string& test) {
        so_ = temp_so(test);
        Result c = run("compile " + (kNodeTests / test / "model.onnx").string() + " -o " + so_);
        EXPECT_EQ(c.status, 0) << c.output;
        return so_;
    }
    void TearDown() override {
        if (!so_.empty()) fs::remove(so_);
    }
    std::string so_;
};

// SequenceInsert at the back: sequence + [tensor].
TEST_F(SequenceNpz, SequenceElementsAreNumberedArrays) {
    std::string so = compile("test_sequence_insert_at_back");
    Result r;
    auto out = run_npz(so,
                       {{"sequence/0", int64s({1, 2, 3})},
                        {"sequence/1", int64s({4, 5})},
                        {"tensor", int64s({7, 8, 9})}},
                       &r);
    ASSERT_EQ(r.status, 0) << r.output;
    ASSERT_EQ(out.size(), 3u);
    std::vector<std::vector<int64_t>> want = {{1, 2, 3}, {4, 5}, {7, 8, 9}};
    for (size_t k = 0; k < out.size(); ++k) {
        EXPECT_EQ(out[k].first, "output0/" + std::to_string(k));
        EXPECT_EQ(out[k].second.to_vector<int64_t>(), want[k]);
    }
    // No element at all: an empty sequence, said on stderr.
    out = run_npz(so, {{"tensor", int64s({7, 8, 9})}}, &r);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("input 'sequence' is an empty sequence"), std::string::npos)
        << r.output;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].first, "output0/0");
}

TEST_F(SequenceNpz, MisnumberedOrUnsplitSequencesAreClearErrors) {
    std::string so = compile("test_sequence_insert_at_back");
    Result r;
    run_npz(so, {{"sequence/0", int64s({1})}, {"sequence/2", int64s({2})}, {"tensor", int64s({3})}},
            &r);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("has sequence/2 but no sequence/1"), std::string::npos) << r.output;
    run_npz(so, {{"sequence", int64s({1})}, {"tensor", int64s({3})}}, &r);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("input 'sequence' is a sequence: give its tensors as sequence/0, "
                            "sequence/1, ..."),
              std::string::npos)
        << r.output;
}

// OptionalHasElement: no array is an empty optional.
TEST_F(SequenceNpz, AnAbsentOptionalIsEmpty) {
    std::string so = compile("test_optional_has_element_empty");
    NDArray value = NDArray::empty({}, {kDLInt, 32, 1});
    *value.data<int32_t>() = 5;
    Result r;
    auto out = run_npz(so, {{"optional_input", value}}, &r);
    ASSERT_EQ(r.status, 0) << r.output;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].second.to_vector<uint8_t>(), std::vector<uint8_t>{1});
    out = run_npz(so, {}, &r);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("no array 'optional_input'"), std::string::npos) << r.output;
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].second.to_vector<uint8_t>(), std::vector<uint8_t>{0});
}

}  // namespace
}  // namespace anvil
