// TfIdfVectorizer beyond the suite's cases (which all use mode TF): IDF and TFIDF with weights,
// unigrams and skip-bigrams together, against a direct count of the n-grams.
#include <gtest/gtest.h>

#include "conformance/node_model.h"
#include "driver/evaluate.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::ModelBuilder;
using testing::array;

// Pool: unigrams {2, 3}, bigrams {(2, 3), (4, 2)}; outputs 0..3 in pool order.
const std::vector<int64_t> kPool = {2, 3, 2, 3, 4, 2};
const std::vector<float> kWeights = {0.5f, 2.0f, 3.0f, 0.25f};

// How often pool entry g occurs in `row`: unigrams at every position, bigrams with up to
// `max_skip` tokens skipped between their two elements.
std::vector<float> reference_counts(const std::vector<int64_t>& row, int64_t max_skip) {
    std::vector<float> counts(4, 0.0f);
    for (int64_t token : row) {
        counts[0] += token == 2;
        counts[1] += token == 3;
    }
    auto n = static_cast<int64_t>(row.size());
    for (int64_t skip = 0; skip <= max_skip; ++skip) {
        for (int64_t s = 0; s + skip + 1 < n; ++s) {
            int64_t a = row[s], b = row[s + skip + 1];
            counts[2] += a == 2 && b == 3;
            counts[3] += a == 4 && b == 2;
        }
    }
    return counts;
}

std::vector<float> run_tfidf(const std::string& mode, const std::vector<int64_t>& data,
                             int64_t max_skip) {
    ModelBuilder b(11);
    b.input("x", {2, static_cast<int64_t>(data.size() / 2)}, ::onnx::TensorProto::INT64);
    auto* n = b.node("TfIdfVectorizer", {"x"}, {"y"}, "tfidf");
    ModelBuilder::attr_string(n, "mode", mode);
    ModelBuilder::attr_int(n, "min_gram_length", 1);
    ModelBuilder::attr_int(n, "max_gram_length", 2);
    ModelBuilder::attr_int(n, "max_skip_count", max_skip);
    ModelBuilder::attr_ints(n, "ngram_counts", {0, 2});
    ModelBuilder::attr_ints(n, "ngram_indexes", {0, 1, 2, 3});
    ModelBuilder::attr_ints(n, "pool_int64s", kPool);
    auto* w = n->add_attribute();
    w->set_name("weights");
    w->set_type(::onnx::AttributeProto::FLOATS);
    for (float v : kWeights) w->add_floats(v);
    b.output("y");
    driver::CompiledModel m = driver::compile_model(b.import(), "llvm");
    auto x = array<int64_t>({2, static_cast<int64_t>(data.size() / 2)}, data, "int64");
    return driver::run_in_process(m.module, m.kernels, {x})[0].to_vector<float>();
}

TEST(TfIdfVectorizer, TfIdfAndTfIdfWeightingOfSkipGrams) {
    std::vector<int64_t> data = {2, 3, 4, 2, 9, 3, 4, 4, 2, 2, 3, 2};  // two rows of 6
    for (int64_t max_skip : {0, 2}) {
        std::vector<float> tf, idf, tfidf;
        for (int r = 0; r < 2; ++r) {
            std::vector<int64_t> row(data.begin() + r * 6, data.begin() + (r + 1) * 6);
            for (size_t g = 0; g < 4; ++g) {
                float count = reference_counts(row, max_skip)[g];
                tf.push_back(count);
                idf.push_back(count > 0 ? kWeights[g] : 0.0f);
                tfidf.push_back(count * kWeights[g]);
            }
        }
        EXPECT_EQ(run_tfidf("TF", data, max_skip), tf) << "skip " << max_skip;
        EXPECT_EQ(run_tfidf("IDF", data, max_skip), idf) << "skip " << max_skip;
        EXPECT_EQ(run_tfidf("TFIDF", data, max_skip), tfidf) << "skip " << max_skip;
    }
}

}  // namespace
}  // namespace anvil
