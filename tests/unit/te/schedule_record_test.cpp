#include "te/schedule_record.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "te/reduction.h"
#include "te/schedule.h"
#include "te/schedule_to_loops.h"
#include "tir/printer.h"

namespace anvil::te {
namespace {

struct Matmul {
    Tensor A, B, C;
};

Matmul matmul(int M, int N, int K) {
    Tensor A = placeholder({M, K}, DataType::float32(), "A");
    Tensor B = placeholder({K, N}, DataType::float32(), "B");
    auto k = reduce_axis(K, "k");
    Tensor C = compute(
        {M, N}, [&](PrimExpr i, PrimExpr j) { return sum(A(i, k->var) * B(k->var, j), {k}); }, "C");
    return {A, B, C};
}

// A schedule using every primitive that lowers on a CPU.
Schedule every_primitive(const Matmul& m) {
    Schedule s = create_schedule({m.C});
    Tensor CC = s.cache_write(m.C, "local");
    auto ax = s[m.C].op_axis();
    auto t = s[m.C].tile(ax[0], ax[1], 8, 16);
    auto [jo, ji] = s[m.C].split_nparts(t[3], 2);
    auto fused = s[m.C].fuse({t[0], t[1]});
    s[m.C].parallel(fused);
    s[m.C].vectorize(ji);
    s[CC].compute_at(s[m.C], fused);
    auto k = s[CC].op_reduce_axis()[0];
    auto [ko, ki] = s[CC].split(k, 4);
    auto cax = s[CC].op_axis();
    s[CC].reorder({ko, ki, cax[0], cax[1]});
    s[CC].unroll(ki);
    s[CC].vectorize(cax[1]);
    Tensor AA = s.cache_read(m.A, "global", {CC});
    s[AA].compute_at(s[m.C], fused);
    return s;
}

TEST(ScheduleRecord, TextRoundTrip) {
    Matmul m = matmul(33, 47, 19);
    Schedule s = every_primitive(m);
    std::string text = print_record(s.record());
    EXPECT_EQ(print_record(parse_record(text)), text);
    EXPECT_EQ(parse_record(text), s.record());
    EXPECT_NE(text.find("split(C, j.inner, nparts=2)"), std::string::npos) << text;
    EXPECT_NE(text.find("cache_read(A, global, [C.local])"), std::string::npos) << text;
    EXPECT_NE(text.find("compute_at(C.local, C, i.outer.j.outer.fused)"), std::string::npos)
        << text;
}

TEST(ScheduleRecord, JsonRoundTrip) {
    Matmul m = matmul(33, 47, 19);
    Schedule s = every_primitive(m);
    nlohmann::json j = record_to_json(s.record());
    ScheduleRecord back = record_from_json(nlohmann::json::parse(j.dump()));
    EXPECT_EQ(back, s.record());
    EXPECT_EQ(j[0]["kind"], "cache_write");
}

TEST(ScheduleRecord, ReplayGivesTheSameLoops) {
    Matmul m = matmul(33, 47, 19);
    Schedule s = every_primitive(m);
    std::string expected = tir::print(schedule_to_loops(s, {m.A, m.B, m.C}, "f"));

    Schedule replay = create_schedule({m.C});
    replay.apply(parse_record(print_record(s.record())));
    EXPECT_EQ(tir::print(schedule_to_loops(replay, {m.A, m.B, m.C}, "f")), expected);
}

TEST(ScheduleRecord, BindIsRepresentable) {
    Matmul m = matmul(64, 64, 64);
    Schedule s = create_schedule({m.C});
    auto ax = s[m.C].op_axis();
    s[m.C].bind(ax[0], "blockIdx.x");
    s[m.C].bind(ax[1], "threadIdx.x");
    std::string text = print_record(s.record());
    EXPECT_EQ(text, "bind(C, i, blockIdx.x)\nbind(C, j, threadIdx.x)\n");
    std::string loops = tir::print(schedule_to_loops(s, {m.A, m.B, m.C}, "f"));
    EXPECT_NE(loops.find("thread_binding(\"threadIdx.x\")"), std::string::npos) << loops;
}

TEST(ScheduleRecord, ParseErrorsNameLineAndColumn) {
    auto message = [](const std::string& text) {
        try {
            parse_record(text);
        } catch (const UserError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message("split(C, i, factor=32)\nsplit(C i)").find("line 2"), std::string::npos);
    EXPECT_NE(message("split(C, i, factor=x)").find("'x' is not an integer"), std::string::npos);
    EXPECT_NE(message("twist(C, i)").find("unknown primitive 'twist'"), std::string::npos);
    EXPECT_NE(message("tile(C, i, j, 4)").find("tile takes"), std::string::npos);
    EXPECT_NE(message("cache_read(A, local)").find("cache_read takes"), std::string::npos);
    EXPECT_EQ(message("# a comment\n\n  reorder(C, j, i)  # trailing\n"), "no error");
}

TEST(ScheduleRecord, JsonErrors) {
    EXPECT_THROW(record_from_json(nlohmann::json::object()), UserError);
    EXPECT_THROW(record_from_json(nlohmann::json::parse(R"([{"stage": "C"}])")), UserError);
}

}  // namespace
}  // namespace anvil::te
