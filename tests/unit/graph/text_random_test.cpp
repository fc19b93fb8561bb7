// Random graphs through print -> parse -> print: shared nodes, tuples, lets, nested and
// primitive functions and constants in random combinations must all round-trip (structurally
// equal, identical text) and pass the verifier (the generator only builds valid IR).
#include <random>

#include "graph_test_util.h"

namespace anvil::graph {
namespace {

using testing::call;
using testing::constant;
using testing::tensor;

class RandomGraph {
public:
    explicit RandomGraph(unsigned seed) : rng_(seed) {}

    IRModule module() {
        std::vector<Ref<Var>> params;
        for (int i = 0; i < 1 + pick(3); ++i) params.push_back(make_var("in", tensor({2, 3})));
        values_.assign(params.begin(), params.end());
        for (int i = 0; i < 6 + pick(12); ++i) values_.push_back(node(2));
        Expr body = values_.back();
        if (pick(2)) body = make_tuple({body, values_[pick(static_cast<int>(values_.size()))]});
        IRModule m;
        m.functions["main"] = make_function(params, body);
        return m;
    }

private:
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
    Expr any() { return values_[pick(static_cast<int>(values_.size()))]; }

    // A new float32 tensor of shape (2, 3) built from earlier values.
    Expr node(int depth) {
        static const char* kUnary[] = {"nn.relu", "exp", "negative", "abs", "sigmoid", "tanh"};
        static const char* kBinary[] = {"add", "multiply", "subtract", "maximum"};
        switch (pick(depth > 0 ? 8 : 3)) {
            case 0:
                return call(kUnary[pick(6)], {any()});
            case 1:
                return call(kBinary[pick(4)], {any(), any()});
            case 2: {
                std::vector<float> v(6);
                for (auto& x : v) x = std::uniform_real_distribution<float>(-2, 2)(rng_);
                return call("add", {any(), constant({2, 3}, DataType::float32(), v)});
            }
            case 3: {
                Expr t = make_tuple({any(), any(), any()});
                return make_tuple_get_item(t, pick(3));
            }
            case 4: {
                auto v = make_var("v", tensor({2, 3}));
                return make_let(v, any(), call(kBinary[pick(4)], {v, any()}));
            }
            case 5:
            case 6: {
                // A function over fresh parameters, called on existing values.
                bool primitive = pick(2);
                auto p0 = make_var("p", tensor({2, 3}));
                auto p1 = make_var("p", tensor({2, 3}));
                auto saved = values_;
                values_ = {p0, p1};
                for (int i = 0; i < 1 + pick(3); ++i) {
                    values_.push_back(primitive ? call(kUnary[pick(6)], {any()}) : node(depth - 1));
                }
                auto fn = make_function({p0, p1}, values_.back(), primitive);
                values_ = saved;
                return make_call_function(fn, {any(), any()});
            }
            default:
                return call(kUnary[pick(6)], {call(kBinary[pick(4)], {any(), any()})});
        }
    }

    std::mt19937 rng_;
    std::vector<Expr> values_;
};

TEST(GraphTextRandom, RoundTrips) {
    for (unsigned seed = 0; seed < 500; ++seed) {
        IRModule m = RandomGraph(seed).module();
        ASSERT_EQ(find_problems(m), std::vector<std::string>()) << print(m);
        testing::expect_round_trip(m);
        if (HasFailure()) {
            ADD_FAILURE() << "seed " << seed;
            return;
        }
    }
}

}  // namespace
}  // namespace anvil::graph
