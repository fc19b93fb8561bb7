// The every-op harness's coverage check: the ops of src/ops/ops.def, read from the table itself
// through its X-macro, against the ops that the cases of every family (every_op_*_test.cpp)
// call in their modules. An op added to the table without a case fails here, by name.
#include "every_op.h"

#include <gtest/gtest-spi.h>

#include <set>
#include <string>
#include <vector>

#include "ops/op_table.h"

namespace anvil::every_op {
namespace {

const std::vector<std::string> kTableOps = {
#define ANVIL_OP(identifier, name) name,
#include "ops/ops.def"
#undef ANVIL_OP
};

TEST(EveryOp, EveryOpOfTheTableHasACase) {
    // The list is the table the compiler uses (a stale copy here would prove nothing).
    ASSERT_GT(kTableOps.size(), 100u);
    for (const std::string& name : kTableOps) {
        EXPECT_NO_THROW(ops::get_op(name)) << name << " is in ops.def but not in the op table";
    }
    std::set<std::string> called;
    for (const auto& family : {elementwise_cases(), reduce_cases(), transform_cases(), nn_cases(),
                               executor_cases(), qnn_cases()}) {
        for (const OpCase& c : family) {
            std::set<std::string> ops = ops_called(c);
            called.insert(ops.begin(), ops.end());
        }
    }
    std::string missing;
    for (const std::string& name : kTableOps) {
        if (!called.count(name)) missing += " " + name;
    }
    EXPECT_EQ(missing, "") << "ops of src/ops/ops.def without a case in the every-op harness "
                              "(tests/e2e/ops/every_op_*_test.cpp):"
                           << missing;
}

// The failures run_cases reports for one case (their messages, concatenated).
std::string failures_of(const OpCase& c) {
    ::testing::TestPartResultArray results;
    {
        ::testing::ScopedFakeTestPartResultReporter reporter(
            ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
        run_cases({c});
    }
    std::string text;
    for (int i = 0; i < results.size(); ++i) text += results.GetTestPartResult(i).message();
    return text;
}

// The harness itself can fail: a wrong value, shape, dtype or kind of result, and a module that
// does not compile, each give a failure naming the case.
TEST(EveryOpHarness, ReportsEachKindOfMismatch) {
    const OpCase good{"negative 3",
                      "def @main(%x: Tensor[(3,), float32]) { negative(%x) }",
                      {array_of({3}, {1, -2, 0.5})},
                      tensor_want({3}, {-1, 2, -0.5}, 0)};
    EXPECT_EQ(failures_of(good), "");
    OpCase value = good;
    value.want.values[1] = 2.5;
    EXPECT_NE(failures_of(value).find("negative 3: element 1 is 2, want 2.5"), std::string::npos)
        << failures_of(value);
    OpCase shape = good;
    shape.want.shape = {1, 3};
    EXPECT_NE(failures_of(shape).find("negative 3: shape"), std::string::npos);
    OpCase dtype = good;
    dtype.want.dtype = "int64";
    EXPECT_NE(failures_of(dtype).find("negative 3: dtype"), std::string::npos);
    OpCase kind = good;
    kind.want = tuple_want({good.want});
    EXPECT_NE(failures_of(kind).find("negative 3: the result's kind differs"), std::string::npos);
    OpCase broken = good;
    broken.text = "def @main(%x: Tensor[(3,), float32]) { negative(%x, %x) }";
    EXPECT_NE(failures_of(broken).find("negative 3 threw: "), std::string::npos);
}

}  // namespace
}  // namespace anvil::every_op
