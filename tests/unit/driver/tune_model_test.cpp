// The tuning loop end to end on small models, with tiny budgets: records written and applied,
// resumed runs that never measure a configuration twice, and the tuning cache shared between
// models. (Measurement failures — crash, hang, wrong answer — are tested in tests/unit/tune.)
#include "driver/tune_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "driver/compile.h"
#include "driver/conv_algorithm.h"
#include "driver/evaluate.h"
#include "driver/layout_block.h"
#include "driver/tune_tasks.h"
#include "driver/workload_key.h"
#include "graph/parser.h"
#include "graph/passes/passes.h"
#include "ops/op_table.h"

namespace anvil::driver {
namespace {

namespace fs = std::filesystem;

// A 3x3 convolution with a ReLU; model B adds a pointwise convolution after the same pair.
const char* kModelA =
    R"(def @main(%x: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(32, 32, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  %1
}
)";
const char* kModelB =
    R"(def @main(%x: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(32, 32, 3, 3), float32], %v: Tensor[(16, 32, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, %v);
  %2
}
)";

graph::IRModule parse(const char* text) {
    return graph::parse_module(text, ops::op_table());
}

// A float32 tensor of `shape` holding sin(0.37 i).
runtime::NDArray sine_input(const std::vector<int64_t>& shape) {
    auto x = runtime::NDArray::empty(shape, {kDLFloat, 32, 1});
    float* p = static_cast<float*>(x.raw_data());
    for (int64_t i = 0; i < x.nbytes() / 4; ++i) p[i] = std::sin(0.37f * i);
    return x;
}

// Every element of float32 `got` within `tol` of `expected`'s; `what` names the case.
void expect_near(const runtime::NDArray& got, const runtime::NDArray& expected, double tol,
                 const std::string& what) {
    ASSERT_EQ(got.nbytes(), expected.nbytes()) << what;
    const float* a = static_cast<const float*>(got.raw_data());
    const float* b = static_cast<const float*>(expected.raw_data());
    for (int64_t i = 0; i < got.nbytes() / 4; ++i)
        ASSERT_NEAR(a[i], b[i], tol) << what << " at " << i;
}

// Pipeline options whose tuning records hold one record: `knob` = `value` for `workload`.
PipelineOptions with_record(const std::string& workload, const std::string& knob, int64_t value) {
    tune::TuningRecord r;
    r.workload = workload;
    r.target = Target::parse("llvm").str();
    r.config = {{knob, value}};
    r.costs = {1e-6};
    auto best = std::make_shared<tune::BestRecords>();
    best->add(r);
    PipelineOptions p;
    p.tuning_records = best;
    return p;
}

class TuneModelTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("anvil-tune-model-test-" +
                std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    TuneOptions options(int trials) const {
        TuneOptions o;
        o.target = "llvm";
        o.trials = trials;
        o.tuner = "random";
        o.batch_size = 3;
        o.records_path = (dir_ / "records.json").string();
        o.cache_dir = (dir_ / "cache").string();
        o.measure.repeat = 2;
        return o;
    }

    const TaskProgress* conv_task(const TuneSummary& s) const {
        for (const auto& t : s.final.tasks) {
            if (t.tunable && t.name.find("conv2d") != std::string::npos) return &t;
        }
        return nullptr;
    }

    fs::path dir_;
};

TEST_F(TuneModelTest, TunesWritesRecordsAndCompileAppliesTheBest) {
    graph::IRModule m = parse(kModelA);
    TuneOptions o = options(7);
    int progress_calls = 0;
    TuneSummary s = tune_model(m, o, [&](const TuneProgress&) { ++progress_calls; });
    const TaskProgress* conv = conv_task(s);
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(s.final.trials, 7);
    EXPECT_GT(progress_calls, 0);
    EXPECT_GT(conv->default_cost, 0);
    EXPECT_GT(conv->best_cost, 0);
    EXPECT_LE(conv->best_cost, conv->default_cost);  // the default is a candidate
    EXPECT_FALSE(s.curve.empty());
    EXPECT_GT(s.mean_trial_s, 0);

    std::vector<std::string> warnings;
    auto records = tune::load_records(o.records_path, &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(records.size(), 7u);
    for (const auto& r : records) {
        EXPECT_EQ(r.workload, conv->workload);
        EXPECT_FALSE(r.config.empty());
        EXPECT_FALSE(r.schedule.empty());
    }

    // Compiling with the records applies the best to the conv kernel, and the model computes
    // the same as untuned.
    PipelineOptions with_records;
    with_records.tuning_records = load_best_records({o.records_path}, &warnings);
    CompiledModel tuned = compile_model(m, "llvm", with_records);
    CompiledModel untuned = compile_model(m, "llvm");
    bool applied = false;
    for (const auto& k : tuned.tuning) {
        if (k.workload == conv->workload) {
            applied = k.applied;
            EXPECT_NEAR(k.record_cost, conv->best_cost, 1e-12);
        }
    }
    EXPECT_TRUE(applied);
    auto x = runtime::NDArray::empty({1, 32, 14, 14}, {kDLFloat, 32, 1});
    auto w = runtime::NDArray::empty({32, 32, 3, 3}, {kDLFloat, 32, 1});
    for (auto* a : {&x, &w}) {
        float* p = static_cast<float*>(a->raw_data());
        for (int64_t i = 0; i < a->nbytes() / 4; ++i) p[i] = std::sin(0.37f * i);
    }
    auto a = evaluate_lowered(tuned.module, tuned.kernels, {x, w});
    auto b = evaluate_lowered(untuned.module, untuned.kernels, {x, w});
    ASSERT_EQ(a.size(), 1u);
    const float* pa = static_cast<const float*>(a[0].raw_data());
    const float* pb = static_cast<const float*>(b[0].raw_data());
    for (int64_t i = 0; i < a[0].nbytes() / 4; ++i) ASSERT_NEAR(pa[i], pb[i], 1e-3) << i;
}

TEST_F(TuneModelTest, ResumingNeverMeasuresAConfigurationTwice) {
    graph::IRModule m = parse(kModelA);
    TuneOptions o = options(4);
    o.cache_dir = "";  // the cache would make the second run skip the task
    tune_model(m, o);
    TuneSummary second = tune_model(m, o);
    EXPECT_EQ(second.final.trials, 4);
    const TaskProgress* conv = conv_task(second);
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->trials, 8);  // four resumed, four new
    std::vector<std::string> warnings;
    std::set<std::string> configs;
    for (const auto& r : tune::load_records(o.records_path, &warnings)) {
        EXPECT_TRUE(configs.insert(te::knob_values_str(r.config)).second)
            << "measured twice: " << te::knob_values_str(r.config);
    }
    EXPECT_EQ(configs.size(), 8u);
    // The resumed run checked its candidates against a reference: no wrong answers, although
    // its first candidate was not the default.
    for (const auto& r : tune::load_records(o.records_path, &warnings)) {
        EXPECT_TRUE(r.ok()) << tune::measure_error_name(r.error) << ": " << r.message;
    }
}

TEST_F(TuneModelTest, ASecondModelReusesTheCacheForSharedWorkloads) {
    TuneOptions o = options(16);  // enough for the cache to count the workload as tuned
    tune_model(parse(kModelA), o);
    TuneOptions ob = options(4);
    ob.records_path = (dir_ / "records_b.json").string();
    TuneSummary b = tune_model(parse(kModelB), ob);
    int cached = 0, tuned = 0;
    for (const auto& t : b.final.tasks) {
        if (!t.tunable) continue;
        if (t.from_cache) {
            ++cached;
            EXPECT_GT(t.trials, 0) << t.name;  // the cached measurements (none new: below)
        } else {
            tuned += t.trials;
        }
    }
    EXPECT_EQ(cached, 1);
    EXPECT_EQ(tuned, 4);  // the whole budget went to the new workload
    EXPECT_EQ(b.final.trials, 4);
    // B's records file holds the cached best too, so it applies on its own.
    std::vector<std::string> warnings;
    auto best = load_best_records({ob.records_path}, &warnings);
    EXPECT_EQ(best->size(), 2u);
}

TEST_F(TuneModelTest, BuildsCandidatesInParallel) {
    TuneOptions o = options(7);
    o.parallel = 3;
    o.batch_size = 6;
    TuneSummary s = tune_model(parse(kModelA), o);
    EXPECT_EQ(s.final.trials, 7);
    std::vector<std::string> warnings;
    std::set<std::string> configs;
    for (const auto& r : tune::load_records(o.records_path, &warnings)) {
        EXPECT_TRUE(r.ok()) << tune::measure_error_name(r.error) << ": " << r.message;
        EXPECT_TRUE(configs.insert(te::knob_values_str(r.config)).second);
    }
    EXPECT_EQ(configs.size(), 7u);
}

TEST_F(TuneModelTest, ACandidateThatTimesOutCostsOneTrialNotTheSession) {
    TuneOptions o = options(3);
    o.measure.timeout_s = 1e-4;  // no kernel finishes in time
    TuneSummary s = tune_model(parse(kModelA), o);
    const TaskProgress* conv = conv_task(s);
    ASSERT_NE(conv, nullptr);
    EXPECT_GE(conv->failures, 1);
    EXPECT_EQ(conv->best_cost, 0);
    EXPECT_NE(conv->last_error.find("timeout"), std::string::npos) << conv->last_error;
    std::vector<std::string> warnings;
    auto records = tune::load_records(o.records_path, &warnings);
    ASSERT_FALSE(records.empty());
    for (const auto& r : records) EXPECT_EQ(r.error, tune::MeasureError::timeout);
}

TEST_F(TuneModelTest, ABuildPastItsTimeLimitCostsOneTrialNotTheSession) {
    TuneOptions o = options(3);
    o.build_timeout_s = 1e-4;  // no compiler starts and finishes in time
    TuneSummary s = tune_model(parse(kModelA), o);
    const TaskProgress* conv = conv_task(s);
    ASSERT_NE(conv, nullptr);
    EXPECT_GE(conv->failures, 1);
    EXPECT_EQ(conv->best_cost, 0);
    EXPECT_NE(conv->last_error.find("build_timeout"), std::string::npos) << conv->last_error;
    std::vector<std::string> warnings;
    auto records = tune::load_records(o.records_path, &warnings);
    ASSERT_FALSE(records.empty());
    for (const auto& r : records) EXPECT_EQ(r.error, tune::MeasureError::build_timeout);

    o.build_timeout_s = 0;
    EXPECT_THROW(tune_model(parse(kModelA), o), UserError);
}

TEST(TuneModel, CompileWarnsAndFallsBackForARecordOfAnotherSpace) {
    graph::IRModule m = parse(kModelA);
    auto tasks = extract_tasks(m, "llvm");
    const TuneTask* conv = nullptr;
    for (const auto& t : tasks) {
        if (t.tunable()) conv = &t;
    }
    ASSERT_NE(conv, nullptr);
    // 999983: not one of its choices.
    PipelineOptions p = with_record(conv->workload, conv->space.knobs[0].name, 999983);
    CompiledModel c = compile_model(m, "llvm", p);
    bool noted = false;
    for (const auto& k : c.tuning) {
        if (k.workload == conv->workload) {
            EXPECT_FALSE(k.applied);
            noted = k.note.find("not one of its choices") != std::string::npos;
        }
    }
    EXPECT_TRUE(noted);
}

// Model A with its weight bound as a constant: alter_op_layout blocks the convolution, and
// Winograd can compute it.
graph::IRModule model_a_with_weight() {
    auto w = runtime::NDArray::empty({32, 32, 3, 3}, {kDLFloat, 32, 1});
    float* p = static_cast<float*>(w.raw_data());
    for (int64_t i = 0; i < w.nbytes() / 4; ++i) p[i] = std::cos(0.11f * i) * 0.2f;
    return graph::bind_params(parse(kModelA), "main", {{"w", w}});
}

bool calls_op(const graph::IRModule& m, const std::string& op) {
    bool found = false;
    for (const auto& [name, k] : m.kernels) found |= name.find(op) != std::string::npos;
    return found;
}

TEST(TuneModel, AlgorithmTasksCoverEveryWinogradCandidate) {
    auto tasks = extract_algorithm_tasks(model_a_with_weight(), "llvm");
    ASSERT_EQ(tasks.size(), 1u);
    const TuneTask& t = tasks[0];
    EXPECT_TRUE(t.tunable()) << t.name;
    EXPECT_EQ(t.variants.size(), 3u);
    EXPECT_EQ(t.space.knobs.at(0).name, kAlgorithmKnob);
    EXPECT_EQ(t.workload.rfind(kWorkloadKeyVersion, 0), 0u) << t.workload;
    // A weight that is not a constant cannot be transformed at compile time: no task.
    EXPECT_TRUE(extract_algorithm_tasks(parse(kModelA), "llvm").empty());
}

TEST(TuneModel, AnAlgorithmRecordMakesTheConvolutionWinograd) {
    graph::IRModule m = model_a_with_weight();
    auto tasks = extract_algorithm_tasks(m, "llvm");
    ASSERT_EQ(tasks.size(), 1u);
    CompiledModel direct = compile_model(m, "llvm");
    runtime::NDArray x = sine_input({1, 32, 14, 14});
    auto expected = evaluate_lowered(direct.module, direct.kernels, {x});
    for (int64_t m_tile : {2, 4}) {
        PipelineOptions p = with_record(tasks[0].workload, kAlgorithmKnob, m_tile);
        CompiledModel w = compile_model(m, "llvm", p);
        EXPECT_TRUE(calls_op(w.module, "winograd")) << "F(" << m_tile << ", 3)";
        EXPECT_FALSE(calls_op(direct.module, "winograd"));
        auto got = evaluate_lowered(w.module, w.kernels, {x});
        expect_near(got[0], expected[0], 2e-3, "F(" + std::to_string(m_tile) + ", 3)");
    }
}

// Two groups of 8 channels: the layout pass leaves it unblocked; nn.conv2d's own form (direct
// or output blocks of 8 in its packed weight) is the choice.
const char* kGroupedModel =
    R"(def @main(%x: Tensor[(1, 16, 14, 14), float32], %w: Tensor[(16, 8, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], groups=2);
  nn.relu(%0)
}
)";

TEST(TuneModel, AWeightBlockRecordChoosesTheFormOfAnUnblockedConvolution) {
    auto w = runtime::NDArray::empty({16, 8, 3, 3}, {kDLFloat, 32, 1});
    float* p = static_cast<float*>(w.raw_data());
    for (int64_t i = 0; i < w.nbytes() / 4; ++i) p[i] = std::cos(0.13f * i) * 0.2f;
    graph::IRModule m = graph::bind_params(parse(kGroupedModel), "main", {{"w", w}});
    EXPECT_TRUE(extract_layout_tasks(m, "llvm").empty());
    auto tasks = extract_algorithm_tasks(m, "llvm");
    ASSERT_EQ(tasks.size(), 1u);
    const TuneTask& t = tasks[0];
    EXPECT_TRUE(t.tunable()) << t.name;
    EXPECT_TRUE(t.compare_variants);
    EXPECT_EQ(t.name, "conv2d 16x14x14 -> 16, weight block");
    EXPECT_EQ(t.space.knobs, (std::vector<te::Knob>{{kWeightBlockKnob, {0, 8}, 8}}));
    ASSERT_EQ(t.variants.size(), 2u);
    CompiledModel untuned = compile_model(m, "llvm");
    runtime::NDArray x = sine_input({1, 16, 14, 14});
    auto expected = evaluate_lowered(untuned.module, untuned.kernels, {x});
    // What the kernel's workload shows of each form: the weight as it is, or packed by 8.
    const std::map<int64_t, std::string> shows = {{0, "(16, 8, 3, 3), float32]"},
                                                  {8, "(2, 8, 3, 3, 8), float32]"}};
    for (const auto& [block, text] : shows) {
        PipelineOptions po = with_record(t.workload, kWeightBlockKnob, block);
        auto kernels = extract_tasks(m, "llvm", po);
        ASSERT_EQ(kernels.size(), 1u);
        EXPECT_NE(kernels[0].workload.find(text), std::string::npos) << kernels[0].workload;
        CompiledModel c = compile_model(m, "llvm", po);
        auto got = evaluate_lowered(c.module, c.kernels, {x});
        expect_near(got[0], expected[0], 1e-4, "block " + std::to_string(block));
    }
}

TEST_F(TuneModelTest, TuningMeasuresEveryWeightBlockOfAnUnblockedConvolution) {
    auto w = runtime::NDArray::empty({16, 8, 3, 3}, {kDLFloat, 32, 1});
    float* p = static_cast<float*>(w.raw_data());
    for (int64_t i = 0; i < w.nbytes() / 4; ++i) p[i] = std::cos(0.13f * i) * 0.2f;
    graph::IRModule m = graph::bind_params(parse(kGroupedModel), "main", {{"w", w}});
    TuneOptions o = options(6);
    TuneSummary s = tune_model(m, o);
    ASSERT_FALSE(s.final.tasks.empty());
    const TaskProgress& form = s.final.tasks[0];
    EXPECT_TRUE(form.algorithm);
    EXPECT_EQ(form.name, "conv2d 16x14x14 -> 16, weight block");
    EXPECT_EQ(form.trials, 2);  // direct, blocks of 8
    EXPECT_EQ(form.failures, 0);
    std::vector<std::string> warnings;
    int form_records = 0;
    for (const auto& r : tune::load_records(o.records_path, &warnings)) {
        form_records += r.config.count(kWeightBlockKnob) > 0;
        EXPECT_TRUE(r.ok()) << te::knob_values_str(r.config) << ": "
                            << tune::measure_error_name(r.error) << ": " << r.message;
    }
    EXPECT_EQ(form_records, 2);
}

TEST_F(TuneModelTest, TuningChoosesLayoutsThenAlgorithmsThenKernels) {
    TuneOptions o = options(24);
    TuneSummary s = tune_model(model_a_with_weight(), o);
    ASSERT_GE(s.final.tasks.size(), 2u);
    // Phase 1 (a quarter of the trials): the block of the 32 channels, every choice measured.
    const TaskProgress& layout = s.final.tasks[0];
    EXPECT_TRUE(layout.layout);
    EXPECT_EQ(layout.trials, 3);  // 8, 16, 32 (not unblocked: Winograd could compute the conv)
    EXPECT_EQ(layout.failures, 0);
    EXPECT_LE(s.final.trials, 24);
    std::vector<std::string> warnings;
    int layout_records = 0, algorithm_records = 0;
    for (const auto& r : tune::load_records(o.records_path, &warnings)) {
        layout_records += r.config.count(kLayoutBlockKnob) > 0;
        algorithm_records += r.config.count(kAlgorithmKnob) > 0;
        EXPECT_TRUE(r.ok()) << te::knob_values_str(r.config) << ": "
                            << tune::measure_error_name(r.error) << ": " << r.message;
    }
    EXPECT_EQ(layout_records, 3);
    const tune::TuningRecord* best = s.best->find(layout.workload, Target::parse("llvm").str());
    ASSERT_NE(best, nullptr);
    const int64_t chosen = best->config.at(kLayoutBlockKnob);
    // Phase 2, in the block chosen: direct, F(2,3), F(4,3).
    const TaskProgress& algorithm = s.final.tasks[1];
    EXPECT_TRUE(algorithm.algorithm);
    EXPECT_EQ(algorithm.trials, 3);
    EXPECT_EQ(algorithm_records, 3);
    EXPECT_NE(algorithm.workload.find("blocks " + std::to_string(chosen)), std::string::npos)
        << algorithm.workload;
}

// Model B with its weights bound: 32 channels (the 3x3 convolution's input and output, the
// pointwise one's input) and 16 (the pointwise one's output).
graph::IRModule model_b_with_weights(const char* text = kModelB) {
    auto w = runtime::NDArray::empty({32, 32, 3, 3}, {kDLFloat, 32, 1});
    auto v = runtime::NDArray::empty({16, 32, 1, 1}, {kDLFloat, 32, 1});
    float* p = static_cast<float*>(w.raw_data());
    for (int64_t i = 0; i < w.nbytes() / 4; ++i) p[i] = std::cos(0.11f * i) * 0.2f;
    p = static_cast<float*>(v.raw_data());
    for (int64_t i = 0; i < v.nbytes() / 4; ++i) p[i] = std::sin(0.07f * i) * 0.3f;
    return graph::bind_params(parse(text), "main", {{"w", w}, {"v", v}});
}

TEST(TuneModel, LayoutTasksAreOnePerChannelCountKeyedByItsConvolutions) {
    auto tasks = extract_layout_tasks(model_b_with_weights(), "llvm");
    ASSERT_EQ(tasks.size(), 2u);
    std::map<std::string, std::vector<int64_t>> choices;
    for (const auto& t : tasks) {
        EXPECT_TRUE(t.tunable()) << t.name;
        EXPECT_TRUE(t.layout);
        EXPECT_FALSE(t.compare_variants);
        EXPECT_EQ(t.workload.rfind(std::string(kWorkloadKeyVersion) + " | layout block", 0), 0u)
            << t.workload;
        ASSERT_EQ(t.space.knobs.size(), 1u);
        EXPECT_EQ(t.space.knobs[0].name, kLayoutBlockKnob);
        EXPECT_EQ(t.space.knobs[0].default_value, 16);
        choices[t.name] = t.space.knobs[0].choices;
        // Every choice makes kernels the others do not.
        ASSERT_EQ(t.variants.size(), t.space.knobs[0].choices.size());
        for (const auto& v : t.variants) EXPECT_FALSE(v.empty()) << t.name;
        // The 16 output channels' block changes the pointwise convolution (and the transform
        // back to NCHW), never the 3x3 convolution between 32-channel values: the kernels every
        // choice shares are not a variant's.
        if (t.name.find("block 16") == std::string::npos) continue;
        for (const auto& v : t.variants) {
            for (const auto& k : v) {
                EXPECT_EQ(workload_key(*k.function).find(", 3, 3, "), std::string::npos)
                    << workload_key(*k.function);
            }
        }
    }
    EXPECT_EQ(choices, (std::map<std::string, std::vector<int64_t>>{
                           {"channel block 16 (1 convolutions)", {0, 8, 16}},
                           // Not unblocked: Winograd could compute the 3x3 convolution.
                           {"channel block 32 (2 convolutions)", {8, 16, 32}}}));
    // The same layers under other names share the keys; other layers touching 32 channels
    // (model A has no pointwise convolution) make another key for 32.
    std::string renamed = kModelB;
    for (size_t at; (at = renamed.find("%x")) != std::string::npos;) renamed.replace(at, 2, "%in");
    auto same = extract_layout_tasks(model_b_with_weights(renamed.c_str()), "llvm");
    ASSERT_EQ(same.size(), 2u);
    EXPECT_EQ(same[0].workload, tasks[0].workload);
    EXPECT_EQ(same[1].workload, tasks[1].workload);
    auto a = extract_layout_tasks(model_a_with_weight(), "llvm");
    ASSERT_EQ(a.size(), 1u);
    for (const auto& t : tasks) EXPECT_NE(a[0].workload, t.workload);
    // No constant weight, no blocked layout: no task.
    EXPECT_TRUE(extract_layout_tasks(parse(kModelB), "llvm").empty());
}

TEST(TuneModel, LayoutKeysCountTheConvolutionsAndExtractionStopsAtItsTimeLimit) {
    // Model B's 3x3 convolution twice: the key of 32 channels counts it twice.
    const char* twice =
        R"(def @main(%x: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(32, 32, 3, 3), float32], %v: Tensor[(16, 32, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.conv2d(%0, %w, padding=[1, 1, 1, 1]);
  %2 = nn.conv2d(%1, %v);
  %2
}
)";
    auto tasks = extract_layout_tasks(model_b_with_weights(twice), "llvm");
    auto once = extract_layout_tasks(model_b_with_weights(), "llvm");
    ASSERT_EQ(tasks.size(), 2u);
    ASSERT_EQ(once.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        bool is32 = tasks[i].name.find("block 32") != std::string::npos;
        EXPECT_EQ(tasks[i].workload.find(" 2 x ") != std::string::npos, is32) << tasks[i].workload;
        EXPECT_EQ(tasks[i].workload == once[i].workload, !is32) << tasks[i].workload;
    }
    // Past the time limit the tasks are listed, not tunable.
    auto late = extract_layout_tasks(model_b_with_weights(), "llvm", {}, 1e-9);
    ASSERT_EQ(late.size(), 2u);
    for (const auto& t : late) EXPECT_FALSE(t.tunable()) << t.name;
}

TEST(TuneModel, ALayoutRecordChangesTheBlockAndKeepsTheAnswer) {
    graph::IRModule m = model_b_with_weights();
    auto tasks = extract_layout_tasks(m, "llvm");
    const TuneTask* t32 = nullptr;
    for (const auto& t : tasks) {
        if (t.name.find("block 32") != std::string::npos) t32 = &t;
    }
    ASSERT_NE(t32, nullptr);
    CompiledModel untuned = compile_model(m, "llvm");
    runtime::NDArray x = sine_input({1, 32, 14, 14});
    auto expected = evaluate_lowered(untuned.module, untuned.kernels, {x});
    // What the kernels' workloads show of each block of the 32-channel values (0 is not a
    // choice, a 3x3 convolution touching them: its record is not applied).
    const std::map<int64_t, std::string> shows = {{0, "(1, 2, 14, 14, 16)"},
                                                  {8, "(1, 4, 14, 14, 8)"},
                                                  {16, "(1, 2, 14, 14, 16)"},
                                                  {32, "(1, 1, 14, 14, 32)"}};
    for (const auto& [block, text] : shows) {
        PipelineOptions p = with_record(t32->workload, kLayoutBlockKnob, block);
        bool shown = false;
        for (const auto& k : extract_tasks(m, "llvm", p)) {
            shown = shown || k.workload.find(text) != std::string::npos;
        }
        EXPECT_TRUE(shown) << "block " << block;
        CompiledModel c = compile_model(m, "llvm", p);
        auto got = evaluate_lowered(c.module, c.kernels, {x});
        expect_near(got[0], expected[0], 1e-3, "block " + std::to_string(block));
    }
}

// A strided depthwise convolution, a ReLU, a strided max pool (both on channel blocks) and a
// softmax over the channels after the layout transform back: tasks of the blocked window
// schedule (tile_ow, tile_oh), the injective schedule and the row reductions (vector_multiple,
// parallel).
const char* kWindowsModel =
    R"(def @main(%x: Tensor[(1, 16, 28, 28), float32], %w: Tensor[(16, 1, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], groups=16);
  %1 = nn.relu(%0);
  %2 = nn.max_pool2d(%1, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]);
  %3 = nn.softmax(%2, axis=1);
  %3
}
)";

TEST_F(TuneModelTest, EveryConfigurationOfEveryTaskComputesTheDefaultsAnswer) {
    auto w = runtime::NDArray::empty({16, 1, 3, 3}, {kDLFloat, 32, 1});
    float* p = static_cast<float*>(w.raw_data());
    for (int64_t i = 0; i < w.nbytes() / 4; ++i) p[i] = std::cos(0.3f * i);
    graph::IRModule m = graph::bind_params(parse(kWindowsModel), "main", {{"w", w}});
    // The kernels' spaces under every choice of the 16 channels' block (0, 8, 16).
    std::vector<TuneTask> layouts = extract_layout_tasks(m, "llvm");
    ASSERT_EQ(layouts.size(), 1u);
    ASSERT_EQ(layouts[0].space.size(), 3);
    std::map<int64_t, int64_t> configurations;  // block -> configurations of the kernels
    std::set<std::string> knobs;
    for (int64_t block : layouts[0].space.knobs[0].choices) {
        PipelineOptions p = with_record(layouts[0].workload, kLayoutBlockKnob, block);
        for (const auto& t : extract_tasks(m, "llvm", p)) {
            if (!t.tunable()) continue;
            configurations[block] += t.space.size();
            if (block == 16) {
                for (const auto& k : t.space.knobs) knobs.insert(k.name);
            }
        }
        ASSERT_LE(configurations[block], 80) << "the test measures every configuration";
    }
    for (const char* k : {"tile_ow", "tile_oh", "vector_multiple", "parallel"}) {
        EXPECT_TRUE(knobs.count(k)) << k;
    }
    TuneOptions o = options(3 * 4 + 80 + 10);  // a quarter of it covers the three blocks
    o.tuner = "grid";
    TuneSummary s = tune_model(m, o);
    const tune::TuningRecord* chosen =
        s.best->find(layouts[0].workload, Target::parse("llvm").str());
    ASSERT_NE(chosen, nullptr);
    const int64_t expected = 3 + configurations.at(chosen->config.at(kLayoutBlockKnob));
    EXPECT_EQ(s.final.trials, expected);  // each space exhausted, nothing measured twice
    std::vector<std::string> warnings;
    auto records = tune::load_records(o.records_path, &warnings);
    EXPECT_EQ(static_cast<int64_t>(records.size()), expected);
    for (const auto& r : records) {
        EXPECT_TRUE(r.ok()) << te::knob_values_str(r.config) << ": "
                            << tune::measure_error_name(r.error) << ": " << r.message;
    }
}

}  // namespace
}  // namespace anvil::driver
