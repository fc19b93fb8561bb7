// nn.attention against a double-precision reference: head sizes 32, 64 and 80, token counts
// that are no multiple of the row strip or the column block, batch dimensions of rank 0 to 2,
// masks absent, broadcast per key (padding) and per query and key (causal, -inf), the x86 and
// the generic schedule, a symbolic token count, the heads merged into the features
// (merge_heads); and the type errors.
#include <cmath>
#include <limits>

#include "driver/compile.h"
#include "driver/vm_compiler.h"
#include "e2e/vm_test_util.h"
#include "graph/parser.h"
#include "nn_op_runner.h"
#include "ops/attention.h"
#include "ops/op_table.h"
#include "runtime/vm.h"

namespace anvil {
namespace {

using ops::AttentionAttrs;
using runtime::NDArray;
using testing::random_tensor;
using testing::run_op;

// softmax(q kᵀ scale + bias) v over the batch entries of q [batch..., S, D].
std::vector<double> attention_reference(const NDArray& q, const NDArray& k, const NDArray& v,
                                        const NDArray* bias, double scale) {
    const auto& qs = q.shape();
    const size_t r = qs.size();
    const int64_t s = qs[r - 2], d = qs[r - 1], skv = k.shape()[r - 2], dv = v.shape()[r - 1];
    int64_t batch = 1;
    for (size_t i = 0; i + 2 < r; ++i) batch *= qs[i];
    if (scale == 0) scale = 1 / std::sqrt(double(d));
    // The bias index of score (b, i, j), broadcasting right-aligned.
    auto bias_at = [&](int64_t b, int64_t i, int64_t j) -> double {
        if (!bias) return 0;
        std::vector<int64_t> full(qs.begin(), qs.end());
        full[r - 1] = skv;
        std::vector<int64_t> idx(r);
        idx[r - 1] = j;
        idx[r - 2] = i;
        for (int64_t x = b, a = int64_t(r) - 3; a >= 0; --a) {
            idx[a] = x % full[a];
            x /= full[a];
        }
        const auto& bs = bias->shape();
        int64_t off = 0;
        for (size_t a = 0; a < bs.size(); ++a) {
            int64_t full_axis = int64_t(r - bs.size() + a);
            off = off * bs[a] + (bs[a] == 1 ? 0 : idx[full_axis]);
        }
        return bias->data<float>()[off];
    };
    std::vector<double> out(size_t(batch * s * dv));
    const float *pq = q.data<float>(), *pk = k.data<float>(), *pv = v.data<float>();
    std::vector<double> row(static_cast<size_t>(skv));
    for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < s; ++i) {
            double mx = -std::numeric_limits<double>::infinity(), sum = 0;
            for (int64_t j = 0; j < skv; ++j) {
                double dot = 0;
                for (int64_t c = 0; c < d; ++c) {
                    dot += double(pq[(b * s + i) * d + c]) * pk[(b * skv + j) * d + c];
                }
                row[j] = dot * scale + bias_at(b, i, j);
                mx = std::max(mx, row[j]);
            }
            for (int64_t j = 0; j < skv; ++j) sum += row[j] = std::exp(row[j] - mx);
            for (int64_t c = 0; c < dv; ++c) {
                double acc = 0;
                for (int64_t j = 0; j < skv; ++j) acc += row[j] * pv[(b * skv + j) * dv + c];
                out[(b * s + i) * dv + c] = acc / sum;
            }
        }
    }
    return out;
}

// `out` [batch..., H, S, Dv] as merge_heads writes it: [batch..., S, H * Dv].
std::vector<double> merged_heads(const std::vector<double>& out, int64_t heads, int64_t s,
                                 int64_t dv) {
    std::vector<double> merged(out.size());
    const int64_t entry = heads * s * dv;
    for (int64_t b = 0; b < int64_t(out.size()) / entry; ++b) {
        for (int64_t h = 0; h < heads; ++h) {
            for (int64_t i = 0; i < s; ++i) {
                for (int64_t c = 0; c < dv; ++c) {
                    merged[size_t(b * entry + (i * heads + h) * dv + c)] =
                        out[size_t(b * entry + (h * s + i) * dv + c)];
                }
            }
        }
    }
    return merged;
}

std::vector<int64_t> with(std::vector<int64_t> batch, std::initializer_list<int64_t> tail) {
    batch.insert(batch.end(), tail);
    return batch;
}

struct Case {
    std::vector<int64_t> batch;
    int64_t s, skv, d, dv;
};

void check(const Case& c, int mask, double scale, bool generic, uint32_t seed,
           bool merge_heads = false) {
    auto q = random_tensor(with(c.batch, {c.s, c.d}), seed, -1.0f, 1.0f);
    auto k = random_tensor(with(c.batch, {c.skv, c.d}), seed + 1, -1.0f, 1.0f);
    auto v = random_tensor(with(c.batch, {c.skv, c.dv}), seed + 2, -1.0f, 1.0f);
    std::vector<NDArray> in = {q, k, v};
    NDArray bias;
    if (mask == 1) {
        // Padding: per batch entry and key, broadcast over the queries; every third key masked
        // with a large negative value (as BERT's exports do), the others a small offset.
        std::vector<int64_t> shape = c.batch;
        if (!shape.empty()) shape.back() = 1;  // broadcast over the heads
        shape.insert(shape.end(), {1, c.skv});
        bias = random_tensor(shape, seed + 3, -0.5f, 0.5f);
        for (int64_t i = 0; i < bias.num_elements(); ++i) {
            if (i % 3 == 2) bias.data<float>()[i] = -10000.0f;
        }
    } else if (mask == 2) {
        // Causal: [S, S_kv], -inf above the diagonal.
        bias = NDArray::empty({c.s, c.skv}, runtime::dl_dtype_from_string("float32"));
        for (int64_t i = 0; i < c.s; ++i) {
            for (int64_t j = 0; j < c.skv; ++j) {
                bias.data<float>()[i * c.skv + j] =
                    j <= i ? 0.0f : -std::numeric_limits<float>::infinity();
            }
        }
    }
    if (mask) in.push_back(bias);
    AttentionAttrs a;
    a.scale = scale;
    a.merge_heads = merge_heads;
    NDArray y =
        run_op("nn.attention", a, in, {}, generic ? ops::schedule_attention_generic : nullptr);
    std::string what = "batch rank " + std::to_string(c.batch.size()) + " S " +
                       std::to_string(c.s) + " S_kv " + std::to_string(c.skv) + " D " +
                       std::to_string(c.d) + " Dv " + std::to_string(c.dv) + " mask " +
                       std::to_string(mask) + (generic ? " generic" : " x86") +
                       (merge_heads ? " heads merged" : "");
    std::vector<double> want = attention_reference(q, k, v, mask ? &bias : nullptr, scale);
    if (merge_heads) {
        std::vector<int64_t> shape = c.batch;
        shape.back() = c.s;
        shape.push_back(c.batch.back() * c.dv);
        ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()), shape) << what;
        want = merged_heads(want, c.batch.back(), c.s, c.dv);
    }
    testing::expect_close(y, want, 2e-5, what);
}

TEST(Attention, HeadSizesOddTokenCountsAndMasks) {
    const Case cases[] = {
        {{2, 3}, 37, 37, 64, 64},  // [batch, heads, S, D], tokens no multiple of any tile
        {{12}, 197, 197, 64, 64},  // ViT-B/16's heads
        {{4}, 37, 19, 32, 32},     // cross-attention: fewer keys than queries
        {{3}, 21, 45, 80, 80},     // head size 80 (5 vectors)
        {{2}, 9, 13, 80, 48},      // another value width than the key's
        {{}, 5, 3, 32, 32},        // no batch dimensions, tiny
    };
    uint32_t seed = 10;
    for (const Case& c : cases) {
        for (int mask : {0, 1}) check(c, mask, 0.0, false, seed += 4);
    }
    check({{3}, 33, 33, 64, 64}, 2, 0.0, false, 90);     // causal
    check({{2, 2}, 17, 17, 32, 32}, 1, 0.3, false, 94);  // an explicit scale
}

// The head merge written by the kernel: [batch..., H, S, Dv] -> [batch..., S, H * Dv].
TEST(Attention, MergedHeadsMatchTheReference) {
    const Case cases[] = {
        {{2, 3}, 37, 37, 64, 64},  // [batch, heads, S, D] -> [batch, S, heads * D]
        {{12}, 197, 197, 64, 64},  // ViT-B/16's heads
        {{4}, 37, 19, 32, 32},     // cross-attention
        {{3}, 21, 45, 80, 80},     // head size 80
        {{2}, 9, 13, 80, 48},      // another value width than the key's
        {{1}, 5, 3, 32, 32},       // one head
    };
    uint32_t seed = 200;
    for (const Case& c : cases) {
        for (int mask : {0, 1}) check(c, mask, 0.0, false, seed += 4, true);
    }
    check({{3}, 33, 33, 64, 64}, 2, 0.0, false, 240, true);    // causal
    check({{2, 3}, 37, 37, 64, 64}, 1, 0.0, true, 244, true);  // generic schedule
}

TEST(Attention, GenericScheduleMatchesTheReference) {
    check({{2, 3}, 37, 37, 64, 64}, 1, 0.0, true, 100);
    check({{3}, 21, 45, 80, 80}, 2, 0.0, true, 104);
}

// A symbolic token count (one compile, run at several lengths on the VM): the x86 schedule
// computes its strips at root instead of per strip of query rows, with the same loops; a padding
// mask over the keys rides along.
TEST(Attention, SymbolicTokenCountRunsAtEveryLength) {
    graph::IRModule m = graph::parse_module(R"(
def @main(%q: Tensor[(3, s, 64), float32], %k: Tensor[(3, s, 64), float32],
          %v: Tensor[(3, s, 64), float32], %mask: Tensor[(1, 1, s), float32]) {
  nn.attention(%q, %k, %v, %mask)
}
)",
                                            ops::op_table());
    driver::CompiledModel model = driver::compile_model(m, "llvm");
    driver::VMExecutable exe = driver::compile_vm(model.module);
    runtime::VirtualMachine vm(exe.program, testing::bytes_of(exe.params), model.kernels);
    for (int64_t s : {1, 5, 13, 40}) {
        auto seed = static_cast<uint32_t>(s * 4);
        auto q = random_tensor({3, s, 64}, seed, -1.0f, 1.0f);
        auto k = random_tensor({3, s, 64}, seed + 1, -1.0f, 1.0f);
        auto v = random_tensor({3, s, 64}, seed + 2, -1.0f, 1.0f);
        auto mask = random_tensor({1, 1, s}, seed + 3, -0.5f, 0.5f);
        if (s > 2) mask.data<float>()[s - 1] = -10000.0f;  // the last key padded
        std::vector<NDArray> out = vm.run({q, k, v, mask});
        ASSERT_EQ(out.size(), 1u);
        testing::expect_close(out[0], attention_reference(q, k, v, &mask, 0.0), 2e-5,
                              "symbolic S = " + std::to_string(s));
    }
}

// The same with the heads merged: [S, 4 * 64] out of four heads of symbolic length (enough heads
// for the schedule to run them in parallel, keys per head).
TEST(Attention, SymbolicTokenCountWithMergedHeads) {
    graph::IRModule m = graph::parse_module(R"(
def @main(%q: Tensor[(4, s, 64), float32], %k: Tensor[(4, s, 64), float32],
          %v: Tensor[(4, s, 64), float32]) {
  nn.attention(%q, %k, %v, merge_heads=True)
}
)",
                                            ops::op_table());
    driver::CompiledModel model = driver::compile_model(m, "llvm");
    driver::VMExecutable exe = driver::compile_vm(model.module);
    runtime::VirtualMachine vm(exe.program, testing::bytes_of(exe.params), model.kernels);
    for (int64_t s : {1, 6, 29}) {
        auto seed = static_cast<uint32_t>(s * 4 + 1);
        auto q = random_tensor({4, s, 64}, seed, -1.0f, 1.0f);
        auto k = random_tensor({4, s, 64}, seed + 1, -1.0f, 1.0f);
        auto v = random_tensor({4, s, 64}, seed + 2, -1.0f, 1.0f);
        std::vector<NDArray> out = vm.run({q, k, v});
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(std::vector<int64_t>(out[0].shape().begin(), out[0].shape().end()),
                  (std::vector<int64_t>{s, 256}));
        testing::expect_close(out[0],
                              merged_heads(attention_reference(q, k, v, nullptr, 0.0), 4, s, 64),
                              2e-5, "symbolic S = " + std::to_string(s) + ", heads merged");
    }
}

// Merged heads with an elementwise tail fused into the kernel (a residual add): the tail's
// output is the tiled one, in the merged layout.
TEST(Attention, MergedHeadsWithAFusedResidualAdd) {
    graph::IRModule m = graph::parse_module(R"(
def @main(%q: Tensor[(3, 37, 32), float32], %k: Tensor[(3, 37, 32), float32],
          %v: Tensor[(3, 37, 32), float32], %r: Tensor[(37, 96), float32]) {
  add(nn.attention(%q, %k, %v, merge_heads=True), %r)
}
)",
                                            ops::op_table());
    driver::CompiledModel model = driver::compile_model(m, "llvm");
    driver::VMExecutable exe = driver::compile_vm(model.module);
    runtime::VirtualMachine vm(exe.program, testing::bytes_of(exe.params), model.kernels);
    auto q = random_tensor({3, 37, 32}, 301, -1.0f, 1.0f);
    auto k = random_tensor({3, 37, 32}, 302, -1.0f, 1.0f);
    auto v = random_tensor({3, 37, 32}, 303, -1.0f, 1.0f);
    auto r = random_tensor({37, 96}, 304, -1.0f, 1.0f);
    std::vector<NDArray> out = vm.run({q, k, v, r});
    ASSERT_EQ(out.size(), 1u);
    std::vector<double> want = merged_heads(attention_reference(q, k, v, nullptr, 0.0), 3, 37, 32);
    for (size_t i = 0; i < want.size(); ++i) want[i] += r.data<float>()[i];
    testing::expect_close(out[0], want, 2e-5, "merged heads + residual");
}

TEST(Attention, LargeScoresDoNotOverflow) {
    // Scores around 1e3: exp overflows float32 without subtracting the row maximum.
    auto q = random_tensor({2, 19, 32}, 7, 5.0f, 6.0f);
    auto k = random_tensor({2, 23, 32}, 8, 5.0f, 6.0f);
    auto v = random_tensor({2, 23, 32}, 9, -1.0f, 1.0f);
    AttentionAttrs a;
    a.scale = 1.0;
    NDArray y = run_op("nn.attention", a, {q, k, v});
    testing::expect_close(y, attention_reference(q, k, v, nullptr, 1.0), 1e-4, "large scores");
}

TEST(Attention, TypeErrorsNameTheOperand) {
    AttentionAttrs a;
    EXPECT_NE(
        testing::type_error("nn.attention", a, {{2, 5, 8}, {2, 6, 8}}).find("takes (q, k, v)"),
        std::string::npos);
    EXPECT_NE(
        testing::type_error("nn.attention", a, {{2, 5, 8}, {2, 6, 7}, {2, 6, 8}}).find("head size"),
        std::string::npos);
    EXPECT_NE(testing::type_error("nn.attention", a, {{2, 5, 8}, {2, 6, 8}, {2, 5, 8}})
                  .find("different key counts"),
              std::string::npos);
    EXPECT_NE(testing::type_error("nn.attention", a, {{2, 5, 8}, {3, 6, 8}, {3, 6, 8}})
                  .find("batch dimensions"),
              std::string::npos);
    EXPECT_NE(testing::type_error("nn.attention", a, {{2, 5, 8}, {2, 6, 8}, {2, 6, 8}, {4, 6}})
                  .find("does not broadcast"),
              std::string::npos);
    std::string err = testing::type_error("nn.attention", a, {{2, 5, 8}, {2, 6, 8}, {2, 6, 8, 1}});
    EXPECT_NE(err.find("another rank"), std::string::npos) << err;
    EXPECT_NE(err.find("node_7"), std::string::npos) << err;
    a.merge_heads = true;  // no heads dimension to merge
    err = testing::type_error("nn.attention", a, {{5, 8}, {6, 8}, {6, 8}});
    EXPECT_NE(err.find("merge_heads needs a heads dimension"), std::string::npos) << err;
    a.merge_heads = false;
    a.scale = -1;
    EXPECT_NE(
        testing::type_error("nn.attention", a, {{2, 5, 8}, {2, 6, 8}, {2, 6, 8}}).find("scale"),
        std::string::npos);
}

TEST(Attention, TheDefaultScaleNeedsAStaticHeadSize) {
    const graph::Op& op = ops::get_op("nn.attention");
    PrimExpr d = make_var("d", DataType::int64());
    auto t = [&](int64_t rows) {
        return graph::make_tensor_type(
            {make_int(DataType::int64(), 2), make_int(DataType::int64(), rows), d},
            DataType::float32());
    };
    std::vector<graph::Type> types = {t(5), t(6), t(6)};
    AttentionAttrs a;
    EXPECT_THROW(op.infer_type(op, types, a, SourceLoc{}), UserError);
    a.scale = 0.125;  // an explicit scale works for any head size
    EXPECT_NO_THROW(op.infer_type(op, types, a, SourceLoc{}));
}

}  // namespace
}  // namespace anvil
