#include "passes_programs.h"
#include "tir/printer.h"
namespace anvil::tir::testing {
TEST(Dbg, X) {
    auto A = make_buffer("A", DataType::int32(), {40});
    auto i = make_var("i");
    auto loop = [&](const PrimExpr& cond) {
        return make_for(i, 0, 20, ForKind::Serial,
                        make_if(likely(cond), make_store(A, make_load(A, {i}) + 1, {i})));
    };
    PrimExpr iv = i;
    std::vector<PrimExpr> conds = {iv < 100, iv >= -3};
    for (const auto& c : conds) {
        auto f = make_prim_func("f", {A}, loop(c));
        auto g = apply(f, partition_loops);
        std::cout << print(f) << "\n" << print(g) << "\n";
    }
}
}
