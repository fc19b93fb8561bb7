// rfactor: the stages it makes, the loops they lower to, its errors and its record. The numbers
// these schedules compute are checked in tests/e2e/schedule_rfactor_test.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "support/error.h"
#include "te/reduction.h"
#include "te/schedule.h"
#include "te/schedule_to_loops.h"
#include "tir/printer.h"

namespace anvil::te {
namespace {

std::string lower_text(const Schedule& s, const std::vector<Tensor>& args) {
    return tir::print(schedule_to_loops(s, args, "f"));
}

// The message of the UserError `fn` raises, or "no error".
std::string error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const UserError& e) {
        return e.what();
    }
    return "no error";
}

std::vector<std::string> names(const std::vector<Ref<IterVar>>& axes) {
    std::vector<std::string> out;
    for (const auto& iv : axes) out.push_back(iv->var->name);
    return out;
}

std::vector<int64_t> shape_of(const Tensor& t) {
    std::vector<int64_t> out;
    for (const auto& d : t.shape()) out.push_back(*as_const_int(d));
    return out;
}

// B[i] = sum over k of A[i, k].
struct RowSum {
    Tensor A, B;
    Ref<IterVar> k;
};

RowSum row_sum(int M, int K) {
    RowSum r;
    r.A = placeholder({M, K}, DataType::float32(), "A");
    r.k = reduce_axis(K, "k");
    r.B = compute(
        {M}, [&](PrimExpr i) { return sum(r.A(i, r.k->var), {r.k}); }, "B");
    return r;
}

TEST(Rfactor, InnerLoopBecomesADataAxisOfANewStage) {
    RowSum r = row_sum(8, 64);
    set_tag(r.B, "row_sum");
    Schedule s = create_schedule({r.B});
    Ref<Buffer> buffer = r.B.buffer();
    auto [ko, ki] = s[r.B].split(r.k, 16);
    Tensor rf = s.rfactor(r.B, ki);

    ASSERT_EQ(s.stages().size(), 3u);
    EXPECT_EQ(s.stages()[1].name, "B.rf");
    EXPECT_EQ(rf.name(), "B.rf");
    EXPECT_EQ(shape_of(rf), (std::vector<int64_t>{16, 8}));
    EXPECT_EQ(names(s[rf].op_axis()), (std::vector<std::string>{"k.inner", "i"}));
    EXPECT_EQ(names(s[rf].op_reduce_axis()), (std::vector<std::string>{"k.outer"}));
    EXPECT_TRUE(is_const_int(s[rf].op_reduce_axis()[0]->dom.extent, 4));
    EXPECT_TRUE(s[rf].stage().relations.empty());

    // B keeps its buffer and tag and now reduces B.rf over one axis of the factored extent.
    Tensor b = s.tensor("B");
    EXPECT_TRUE(b.buffer().same_as(buffer));
    EXPECT_EQ(b.op->tag, "row_sum");
    EXPECT_EQ(names(s[b].op_reduce_axis()), (std::vector<std::string>{"k.inner"}));
    EXPECT_TRUE(is_const_int(s[b].op_reduce_axis()[0]->dom.extent, 16));
    EXPECT_EQ(s[b].stage().leaf_axes.size(), 2u);
    EXPECT_TRUE(s[b].stage().relations.empty());
    ASSERT_EQ(b.op.as<ComputeOp>()->inputs.size(), 1u);
    EXPECT_TRUE(b.op.as<ComputeOp>()->inputs[0].same_as(rf.op));
    EXPECT_TRUE(s[r.B].stage().op.same_as(b.op));  // the old handle still finds the stage

    // Divisible: no condition in the partial reduction.
    EXPECT_EQ(lower_text(s, {r.A, r.B}),
              "prim_func f(A: float32[8, 64], B: float32[8]) {\n"
              "  allocate B_rf: float32[16, 8] {\n"
              "    for k_inner in [0, 16) {\n"
              "      for i in [0, 8) {\n"
              "        B_rf[k_inner, i] = 0.0f\n"
              "        for k_outer in [0, 4) { B_rf[k_inner, i] = B_rf[k_inner, i] + A[i, "
              "k_outer * 16 + k_inner] }\n"
              "      }\n"
              "    }\n"
              "    for i_1 in [0, 8) {\n"
              "      B[i_1] = 0.0f\n"
              "      for k_inner_1 in [0, 16) { B[i_1] = B[i_1] + B_rf[k_inner_1, i_1] }\n"
              "    }\n"
              "  }\n"
              "}\n");
}

TEST(Rfactor, NonDivisibleSplitKeepsThePartialSumsInsideTheAxis) {
    RowSum r = row_sum(8, 100);
    Schedule s = create_schedule({r.B});
    auto [ko, ki] = s[r.B].split(r.k, 16);
    Tensor rf = s.rfactor(r.B, ki, 1);
    EXPECT_EQ(shape_of(rf), (std::vector<int64_t>{8, 16}));
    EXPECT_TRUE(is_const_int(s[rf].op_reduce_axis()[0]->dom.extent, 7));
    auto* body = rf.op.as<ComputeOp>()->body.as<Reduce>();
    ASSERT_NE(body, nullptr);
    // `likely`, like lowering's own split guards, so partition_loops peels the tail off.
    EXPECT_EQ(to_string(body->condition), "call<bool>(\"likely\", k.outer * 16 + k.inner < 100)");
    std::string text = lower_text(s, {r.A, r.B});
    EXPECT_NE(text.find("if call<bool>(\"likely\", k_outer * 16 + k_inner < 100) {"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("A[i, k_outer * 16 + k_inner]"), std::string::npos) << text;
}

TEST(Rfactor, FactoredAxisCanBeVectorizedAndTheFinalReductionParallel) {
    RowSum r = row_sum(8, 100);
    Schedule s = create_schedule({r.B});
    auto [ko, ki] = s[r.B].split(r.k, 16);
    Tensor rf = s.rfactor(r.B, ki, 1);
    auto ax = s[rf].op_axis();
    s[rf].reorder({ax[0], s[rf].op_reduce_axis()[0], ax[1]});
    s[rf].vectorize(ax[1]);
    s[r.B].parallel(s[r.B].op_axis()[0]);
    EXPECT_EQ(lower_text(s, {r.A, r.B}),
              "prim_func f(A: float32[8, 100], B: float32[8]) {\n"
              "  allocate B_rf: float32[8, 16] {\n"
              "    for i in [0, 8) {\n"
              "      for k_inner_init in [0, 16) vectorized { B_rf[i, k_inner_init] = 0.0f }\n"
              "      for k_outer in [0, 7) {\n"
              "        for k_inner in [0, 16) vectorized {\n"
              "          if call<bool>(\"likely\", k_outer * 16 + k_inner < 100) {\n"
              "            B_rf[i, k_inner] = B_rf[i, k_inner] + A[i, k_outer * 16 + k_inner]\n"
              "          }\n"
              "        }\n"
              "      }\n"
              "    }\n"
              "    for i_1 in [0, 8) parallel {\n"
              "      B[i_1] = 0.0f\n"
              "      for k_inner_1 in [0, 16) { B[i_1] = B[i_1] + B_rf[i_1, k_inner_1] }\n"
              "    }\n"
              "  }\n"
              "}\n");
}

TEST(Rfactor, NegativeFactorAxisCountsFromTheEnd) {
    RowSum r = row_sum(8, 64);
    Schedule s = create_schedule({r.B});
    auto [ko, ki] = s[r.B].split(r.k, 16);
    Tensor rf = s.rfactor(r.B, ki, -1);
    EXPECT_EQ(shape_of(rf), (std::vector<int64_t>{8, 16}));
    EXPECT_EQ(names(s[rf].op_axis()), (std::vector<std::string>{"i", "k.inner"}));
}

TEST(Rfactor, OuterLoopOfANpartsSplit) {
    RowSum r = row_sum(8, 100);
    Schedule s = create_schedule({r.B});
    auto [ko, ki] = s[r.B].split_nparts(r.k, 3);  // 3 parts of 34, the last one short
    Tensor rf = s.rfactor(r.B, ko);
    EXPECT_EQ(shape_of(rf), (std::vector<int64_t>{3, 8}));
    EXPECT_EQ(names(s[rf].op_reduce_axis()), (std::vector<std::string>{"k.inner"}));
    EXPECT_TRUE(is_const_int(s[rf].op_reduce_axis()[0]->dom.extent, 34));
    std::string text = lower_text(s, {r.A, r.B});
    EXPECT_NE(text.find("(\"likely\", k_outer * 34 + k_inner < 100)"), std::string::npos) << text;
    EXPECT_NE(text.find("for k_outer_1 in [0, 3)"), std::string::npos) << text;
}

TEST(Rfactor, UnsplitOnlyAxisLeavesNoReductionInTheNewStage) {
    RowSum r = row_sum(8, 10);
    Schedule s = create_schedule({r.B});
    Tensor rf = s.rfactor(r.B, r.k);
    EXPECT_EQ(shape_of(rf), (std::vector<int64_t>{10, 8}));
    EXPECT_FALSE(rf.op.as<ComputeOp>()->is_reduction());
    std::string text = lower_text(s, {r.A, r.B});
    EXPECT_NE(text.find("B_rf[k, i] = A[i, k]"), std::string::npos) << text;
}

TEST(Rfactor, MaxKeepsItsCombinerAndIdentity) {
    Tensor A = placeholder({8, 100}, DataType::float32(), "A");
    auto k = reduce_axis(100, "k");
    Tensor B = compute(
        {8}, [&](PrimExpr i) { return max(A(i, k->var), {k}); }, "B");
    Schedule s = create_schedule({B});
    auto [ko, ki] = s[B].split(k, 16);
    Tensor rf = s.rfactor(B, ki);
    EXPECT_EQ(rf.op.as<ComputeOp>()->body.as<Reduce>()->combiner->name, "max");
    EXPECT_EQ(s.tensor("B").op.as<ComputeOp>()->body.as<Reduce>()->combiner->name, "max");
    std::string text = lower_text(s, {A, B});
    EXPECT_NE(text.find("B_rf[k_inner, i] = -inff"), std::string::npos) << text;
    EXPECT_NE(text.find("B[i_1] = max(B[i_1], B_rf[k_inner_1, i_1])"), std::string::npos) << text;
}

// B[i] = sum over k1, k2 of A[i, k1, k2] where k1 + k2 < 12.
struct TwoAxes {
    Tensor A, B;
    Ref<IterVar> k1, k2;
};

TwoAxes two_axes() {
    TwoAxes t;
    t.A = placeholder({6, 9, 10}, DataType::float32(), "A");
    t.k1 = reduce_axis(9, "k1");
    t.k2 = reduce_axis(10, "k2");
    t.B = compute(
        {6},
        [&](PrimExpr i) {
            return sum(t.A(i, t.k1->var, t.k2->var), {t.k1, t.k2}, t.k1->var + t.k2->var < 12);
        },
        "B");
    return t;
}

TEST(Rfactor, OneOfTwoReductionAxesKeepsTheOtherAndTheCondition) {
    TwoAxes t = two_axes();
    Schedule s = create_schedule({t.B});
    auto [o, in] = s[t.B].split(t.k2, 4);
    s[t.B].reorder({o, t.k1, in});
    Tensor rf = s.rfactor(t.B, in);
    // The remaining reduction loops keep C's loop order.
    EXPECT_EQ(names(s[rf].op_reduce_axis()), (std::vector<std::string>{"k2.outer", "k1"}));
    EXPECT_EQ(shape_of(rf), (std::vector<int64_t>{4, 6}));
    auto* body = rf.op.as<ComputeOp>()->body.as<Reduce>();
    EXPECT_EQ(to_string(body->condition),
              "k1 + (k2.outer * 4 + k2.inner) < 12 && call<bool>(\"likely\", k2.outer * 4 + "
              "k2.inner < 10)");
    std::string text = lower_text(s, {t.A, t.B});
    EXPECT_NE(text.find("A[i, k1, k2_outer * 4 + k2_inner]"), std::string::npos) << text;

    // An unsplit axis can be factored too.
    Schedule s2 = create_schedule({t.B});
    Tensor rf2 = s2.rfactor(t.B, t.k1, 1);
    EXPECT_EQ(shape_of(rf2), (std::vector<int64_t>{6, 9}));
    EXPECT_EQ(names(s2[rf2].op_reduce_axis()), (std::vector<std::string>{"k2"}));
}

TEST(Rfactor, Errors) {
    RowSum r = row_sum(8, 64);
    {
        Schedule s = create_schedule({r.B});
        EXPECT_NE(error_of([&] {
                      s.rfactor(r.B, s[r.B].op_axis()[0]);
                  }).find("rfactor on stage 'B', axis 'i': it is a data-parallel axis"),
                  std::string::npos);
        s[r.B].split(r.k, 16);
        EXPECT_NE(error_of([&] {
                      s.rfactor(r.B, r.k);
                  }).find("rfactor on stage 'B': axis 'k' was already split or fused"),
                  std::string::npos);
        auto rfactor = [&](const char* stage, int64_t factor_axis) {
            return error_of([&] {
                s.apply(Primitive{.kind = "rfactor",
                                  .stage = stage,
                                  .axes = {"k.inner"},
                                  .factors = {factor_axis}});
            });
        };
        EXPECT_NE(rfactor("B", 2).find(
                      "rfactor on stage 'B', axis 'k.inner': factor_axis 2 is out of range"),
                  std::string::npos);
        EXPECT_NE(rfactor("B", -3).find("factor_axis -3 is out of range"), std::string::npos);
        EXPECT_NE(rfactor("A", 0).find("rfactor on stage 'A': it is a placeholder"),
                  std::string::npos);
        EXPECT_EQ(s.record().size(), 1u);  // failed primitives are not recorded
    }
    {
        Tensor A = placeholder({8}, DataType::float32(), "A");
        Tensor E = compute(
            {8}, [&](PrimExpr i) { return A(i) * 2.0f; }, "E");
        Schedule s = create_schedule({E});
        EXPECT_NE(error_of([&] {
                      s.rfactor(E, s[E].op_axis()[0]);
                  }).find("rfactor on stage 'E': it is not a reduction"),
                  std::string::npos);
    }
    {
        TwoAxes t = two_axes();
        Schedule s = create_schedule({t.B});
        auto fused = s[t.B].fuse({t.k1, t.k2});
        auto [o, in] = s[t.B].split(fused, 4);
        EXPECT_NE(error_of([&] { s.rfactor(t.B, in); })
                      .find("rfactor on stage 'B', axis 'k1.k2.fused.inner': it is made by "
                            "fusing reduction loops ('k1.k2.fused')"),
                  std::string::npos);
    }
    {
        Schedule s = create_schedule({r.B});
        auto [ko, ki] = s[r.B].split(r.k, 16);
        s[r.B].unroll(ki);
        EXPECT_NE(error_of([&] {
                      s.rfactor(r.B, ki);
                  }).find("rfactor on stage 'B': its loop 'k.inner' is already annotated"),
                  std::string::npos);
    }
    {
        Schedule s = create_schedule({r.B});
        s[r.B].split(s[r.B].op_axis()[0], 4);
        auto [ko, ki] = s[r.B].split(r.k, 16);
        EXPECT_NE(error_of([&] {
                      s.rfactor(r.B, ki);
                  }).find("rfactor on stage 'B': its data-parallel axis 'i' was split"),
                  std::string::npos);
    }
    {
        // B reads A2 = A + 1 computed at B's loop; and B computed inside a consumer C.
        Tensor A2 = compute(
            {8, 64}, [&](PrimExpr i, PrimExpr j) { return r.A(i, j) + 1.0f; }, "A2");
        auto k = reduce_axis(64, "k");
        Tensor B = compute(
            {8}, [&](PrimExpr i) { return sum(A2(i, k->var), {k}); }, "B");
        Tensor C = compute(
            {8}, [&](PrimExpr i) { return B(i) * 2.0f; }, "C");
        Schedule s = create_schedule({C});
        s[A2].compute_at(s[B], s[B].op_axis()[0]);
        EXPECT_NE(error_of([&] {
                      s.rfactor(B, k);
                  }).find("rfactor on stage 'B': stage 'A2' is computed at its loop 'i'"),
                  std::string::npos);
        s[A2].compute_root();
        s[B].compute_at(s[C], s[C].op_axis()[0]);
        EXPECT_NE(error_of([&] {
                      s.rfactor(B, k);
                  }).find("rfactor on stage 'B': the stage is computed inside another stage"),
                  std::string::npos);
    }
}

TEST(Rfactor, RecordRoundTripsAndReplays) {
    RowSum r = row_sum(8, 100);
    Schedule s = create_schedule({r.B});
    auto [ko, ki] = s[r.B].split(r.k, 16);
    Tensor rf = s.rfactor(r.B, ki, 1);
    auto ax = s[rf].op_axis();
    s[rf].reorder({ax[0], s[rf].op_reduce_axis()[0], ax[1]});
    s[rf].vectorize(ax[1]);
    s[r.B].parallel(s[r.B].op_axis()[0]);
    std::string text = print_record(s.record());
    EXPECT_EQ(text,
              "split(B, k, factor=16)\n"
              "rfactor(B, k.inner, factor_axis=1)\n"
              "reorder(B.rf, i, k.outer, k.inner)\n"
              "vectorize(B.rf, k.inner)\n"
              "parallel(B, i)\n");
    EXPECT_EQ(parse_record(text), s.record());
    EXPECT_EQ(record_from_json(nlohmann::json::parse(record_to_json(s.record()).dump())),
              s.record());
    EXPECT_EQ(record_to_json(s.record())[1],
              nlohmann::json::parse(
                  R"({"kind": "rfactor", "stage": "B", "axes": ["k.inner"], "factors": [1]})"));

    Schedule replay = create_schedule({r.B});
    replay.apply(parse_record(text));
    EXPECT_EQ(lower_text(replay, {r.A, r.B}), lower_text(s, {r.A, r.B}));

    // factor_axis 0 is not printed.
    Primitive p{.kind = "rfactor", .stage = "B", .axes = {"k.inner"}, .factors = {0}};
    EXPECT_EQ(p.str(), "rfactor(B, k.inner)");
    EXPECT_EQ(parse_record("rfactor(B, k.inner)\n"), ScheduleRecord{p});
    EXPECT_NE(error_of([] { parse_record("rfactor(B, k.inner, 1)"); }).find("rfactor takes"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_record("rfactor(B, k.inner, nparts=1)"); }).find("rfactor takes"),
              std::string::npos);
}

}  // namespace
}  // namespace anvil::te
