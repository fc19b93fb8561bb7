// The auto-scheduler in the tuning loop (TuneOptions::search "auto"): every kernel of static
// shapes is a program task, its records replay at compile time and compute the untuned answer,
// a resumed run never measures a program twice, and bad cost models and stale records are
// reported, not crashes, and leave no work directory behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "driver/compile.h"
#include "driver/evaluate.h"
#include "driver/tune_model.h"
#include "graph/parser.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::driver {
namespace {

namespace fs = std::filesystem;

// A dense layer with its epilogue, then a softmax: a kernel with template knobs and one whose
// knobs are few; both are program tasks under the auto search.
const char* kModel =
    R"(def @main(%x: Tensor[(16, 64), float32], %w: Tensor[(48, 64), float32], %b: Tensor[(48), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.bias_add(%0, %b);
  %2 = nn.relu(%1);
  %3 = nn.softmax(%2);
  %3
}
)";

runtime::NDArray sine(const std::vector<int64_t>& shape, float step) {
    auto x = runtime::NDArray::empty(shape, {kDLFloat, 32, 1});
    float* p = static_cast<float*>(x.raw_data());
    for (int64_t i = 0; i < static_cast<int64_t>(x.nbytes() / 4); ++i) p[i] = std::sin(step * i);
    return x;
}

class TuneSessionTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("anvil-tune-session-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    TuneOptions options(int trials) const {
        TuneOptions o;
        o.target = "llvm";
        o.trials = trials;
        o.search = "auto";
        o.batch_size = 4;
        o.records_path = (dir_ / "records.json").string();
        o.measure.repeat = 2;
        return o;
    }

    graph::IRModule model() const { return graph::parse_module(kModel, ops::op_table()); }

    fs::path dir_;
};

TEST_F(TuneSessionTest, AutoSearchTunesEveryKernelAndCompileReplaysTheBestPrograms) {
    graph::IRModule m = model();
    TuneOptions o = options(30);
    TuneSummary s = tune_model(m, o);
    ASSERT_GE(s.final.tasks.size(), 2u);
    for (const auto& t : s.final.tasks) {
        EXPECT_TRUE(t.tunable) << t.name;
        EXPECT_GT(t.default_cost, 0) << t.name;
        EXPECT_LE(t.best_cost, t.default_cost) << t.name;  // the default is the first candidate
        EXPECT_GT(t.trials, 1) << t.name;
    }
    std::vector<std::string> warnings;
    auto records = tune::load_records(o.records_path, &warnings);
    ASSERT_EQ(records.size(), 30u);
    int programs = 0;
    for (const auto& r : records) {
        EXPECT_TRUE(r.ok()) << tune::measure_error_name(r.error) << ": " << r.message;
        if (r.search != tune::SearchKind::program) continue;
        ++programs;
        EXPECT_TRUE(r.config.empty());
        EXPECT_FALSE(r.schedule.empty());
    }
    EXPECT_EQ(programs, 30 - static_cast<int>(s.final.tasks.size()));  // all but the defaults

    // A best that is a program replays at compile time; the model computes the untuned answer.
    // (Make every task's best a program: the defaults' records are left out.)
    auto best = std::make_shared<tune::BestRecords>();
    for (const auto& r : records) {
        if (r.search == tune::SearchKind::program) best->add(r);
    }
    PipelineOptions with_records;
    with_records.tuning_records = best;
    CompiledModel tuned = compile_model(m, "llvm", with_records);
    CompiledModel untuned = compile_model(m, "llvm");
    int replayed = 0;
    for (const auto& k : tuned.tuning) {
        EXPECT_TRUE(k.applied) << k.kernel << ": " << k.note;
        replayed += k.program;
    }
    EXPECT_EQ(replayed, static_cast<int>(tuned.tuning.size()));
    std::vector<runtime::NDArray> in = {sine({16, 64}, 0.37f), sine({48, 64}, 0.11f),
                                        sine({48}, 0.5f)};
    auto a = evaluate_lowered(tuned.module, tuned.kernels, in);
    auto b = evaluate_lowered(untuned.module, untuned.kernels, in);
    ASSERT_EQ(a.size(), 1u);
    const float* pa = static_cast<const float*>(a[0].raw_data());
    const float* pb = static_cast<const float*>(b[0].raw_data());
    for (int64_t i = 0; i < static_cast<int64_t>(a[0].nbytes() / 4); ++i) {
        ASSERT_NEAR(pa[i], pb[i], 1e-4) << i;
    }
}

TEST_F(TuneSessionTest, EveryKernelGetsAWarmUpBatchBeforeTheSchedulerPicks) {
    // After the defaults, each task's first batch is a small one (4 programs), the largest task
    // (weight x default cost) first: with 2 tasks, 10 trials are 1 + 4 each, although a usual
    // batch (8 here) would have gone to one of them.
    graph::IRModule m = model();
    TuneOptions o = options(10);
    TuneSummary s = tune_model(m, o);
    ASSERT_EQ(s.final.tasks.size(), 2u);
    for (const auto& t : s.final.tasks) EXPECT_EQ(t.trials, 5) << t.name;
    std::vector<std::string> warnings;
    auto records = tune::load_records(o.records_path, &warnings);
    ASSERT_EQ(records.size(), 10u);
    const auto& first = s.final.tasks[0];
    const auto& second = s.final.tasks[1];
    const bool first_larger =
        first.weight * first.default_cost >= second.weight * second.default_cost;
    const std::string& larger = first_larger ? first.workload : second.workload;
    for (size_t i = 2; i < 10; ++i) {
        EXPECT_EQ(records[i].workload == larger, i < 6) << "trial " << i;
    }
}

TEST_F(TuneSessionTest, ResumingNeverMeasuresAProgramTwice) {
    graph::IRModule m = model();
    TuneOptions o = options(14);
    tune_model(m, o);
    TuneSummary second = tune_model(m, o);
    EXPECT_EQ(second.final.trials, 14);
    std::vector<std::string> warnings;
    std::set<std::string> seen;
    for (const auto& r : tune::load_records(o.records_path, &warnings)) {
        if (r.search != tune::SearchKind::program) continue;
        EXPECT_TRUE(seen.insert(r.workload + te::print_record(r.schedule)).second)
            << "measured twice:\n"
            << te::print_record(r.schedule);
    }
    EXPECT_GE(seen.size(), 20u);
}

TEST_F(TuneSessionTest, AProgramRecordOfAnotherComputationFallsBackToTheDefault) {
    graph::IRModule m = model();
    CompiledModel untuned = compile_model(m, "llvm");
    auto best = std::make_shared<tune::BestRecords>();
    for (const auto& k : untuned.tuning) {
        tune::TuningRecord r;
        r.workload = k.workload;
        r.target = Target::parse("llvm").str();
        r.search = tune::SearchKind::program;
        r.schedule = {te::Primitive{.kind = "compute_inline", .stage = "no_such_stage"}};
        r.costs = {1e-6};
        best->add(r);
    }
    PipelineOptions p;
    p.tuning_records = best;
    CompiledModel tuned = compile_model(m, "llvm", p);
    for (const auto& k : tuned.tuning) {
        EXPECT_FALSE(k.applied);
        EXPECT_NE(k.note.find("tuning record not applied"), std::string::npos) << k.note;
        EXPECT_NE(k.note.find("no_such_stage"), std::string::npos) << k.note;
    }
}

TEST_F(TuneSessionTest, ACostModelThatCannotBeReadIsAUserError) {
    TuneOptions o = options(4);
    o.cost_model = (dir_ / "missing.json").string();
    try {
        tune_model(model(), o);
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos) << e.what();
    }
    const std::string garbage = (dir_ / "garbage.json").string();
    {
        std::ofstream f(garbage);
        f << "{\"not\": \"a model\"";
    }
    o.cost_model = garbage;
    EXPECT_THROW(tune_model(model(), o), UserError);
    // The session's work directories (anvil-tune-<pid>-*) went with the errors.
    const std::string mine = "anvil-tune-" + std::to_string(::getpid()) + "-";
    for (const auto& entry : fs::directory_iterator(fs::temp_directory_path())) {
        EXPECT_NE(entry.path().filename().string().rfind(mine, 0), 0u) << entry.path();
    }
}

TEST_F(TuneSessionTest, UnknownSearchIsAUserError) {
    TuneOptions o = options(4);
    o.search = "magic";
    try {
        tune_model(model(), o);
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("magic"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace anvil::driver
