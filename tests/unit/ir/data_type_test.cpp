#include "ir/data_type.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(DataType, PrintsAndParsesEveryType) {
    for (DataType t : {DataType::bool_(), DataType::int_(8), DataType::int_(16), DataType::int32(),
                       DataType::int64(), DataType::uint(8), DataType::uint(16), DataType::uint(32),
                       DataType::uint(64), DataType::float16(), DataType::bfloat16(),
                       DataType::float32(), DataType::float64(), DataType::float32().with_lanes(16),
                       DataType::int32().with_lanes(8), DataType::bool_(4), DataType::handle()}) {
        DataType back;
        ASSERT_TRUE(DataType::parse(t.str(), &back)) << t.str();
        EXPECT_EQ(back, t) << t.str();
    }
}

TEST(DataType, RejectsUnknownSpellings) {
    DataType t;
    EXPECT_FALSE(DataType::parse("float7", &t));
    EXPECT_FALSE(DataType::parse("int", &t));
    EXPECT_FALSE(DataType::parse("floatx4", &t));
    EXPECT_FALSE(DataType::parse("bfloat32", &t));
    EXPECT_FALSE(DataType::parse("int32x0", &t));
}

TEST(DataType, Properties) {
    EXPECT_EQ(DataType::float32().with_lanes(8).bytes(), 4);
    EXPECT_TRUE(DataType::bfloat16().is_floating());
    EXPECT_FALSE(DataType::bool_().is_integer());
    EXPECT_EQ(DataType::int64().with_lanes(4).element_of(), DataType::int64());
}

}  // namespace
}  // namespace anvil
