#include "matmul_schedules.h"

#include <algorithm>

#include "support/error.h"
#include "te/reduction.h"

namespace anvil::examples {

std::vector<std::string> matmul_variants() {
    return {"naive", "blocking", "vectorize", "permute", "cache_write", "pack", "parallel"};
}

namespace {

// Register-blocked micro-kernel: a MR x NR tile of C lives in registers (NR = 2 AVX-512 vectors),
// accumulated over all of K; B's K x NR panel is packed contiguously once per column panel and
// reused by every row tile.
constexpr int64_t kMR = 6;
constexpr int64_t kNR = 32;

void schedule_micro_kernel(Matmul& m, bool pack, bool parallel) {
    te::Schedule& s = m.schedule;
    te::Tensor CC = s.cache_write(m.C, "local");
    auto ax = s[m.C].op_axis();
    auto [io, ii] = s[m.C].split(ax[0], kMR);
    auto [jo, ji] = s[m.C].split(ax[1], kNR);
    s[m.C].reorder({jo, io, ii, ji});
    s[m.C].vectorize(ji);
    s[CC].compute_at(s[m.C], io);
    auto cax = s[CC].op_axis();
    auto k = s[CC].op_reduce_axis()[0];
    s[CC].reorder({k, cax[0], cax[1]});
    s[CC].unroll(cax[0]);
    s[CC].vectorize(cax[1]);
    if (pack) {
        te::Tensor BB = s.cache_read(m.B, "global", {CC});
        s[BB].compute_at(s[m.C], jo);
        s[BB].vectorize(s[BB].op_axis()[1]);
    }
    if (parallel) s[m.C].parallel(jo);
}

}  // namespace

Matmul make_matmul(const std::string& variant, int64_t M, int64_t N, int64_t K) {
    auto names = matmul_variants();
    if (std::find(names.begin(), names.end(), variant) == names.end()) {
        user_error() << "unknown matmul variant '" << variant << "'";
    }
    auto i64 = [](int64_t v) { return make_int(DataType::int32(), v); };
    te::Tensor A = te::placeholder({i64(M), i64(K)}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({i64(K), i64(N)}, DataType::float32(), "B");
    auto k = te::reduce_axis(i64(K), "k");
    te::Tensor C = te::compute(
        {i64(M), i64(N)},
        [&](PrimExpr i, PrimExpr j) { return te::sum(A(i, k->var) * B(k->var, j), {k}); }, "C");
    Matmul m{A, B, C, te::create_schedule({C})};
    te::Schedule& s = m.schedule;
    if (variant == "naive") return m;
    if (variant == "blocking" || variant == "vectorize" || variant == "permute") {
        constexpr int64_t bn = 32;
        auto ax = s[C].op_axis();
        auto t = s[C].tile(ax[0], ax[1], bn, bn);  // io, jo, ii, ji
        auto [ko, ki] = s[C].split(k, 4);
        if (variant == "permute") {
            s[C].reorder({t[0], t[1], ko, t[2], ki, t[3]});
        } else {
            s[C].reorder({t[0], t[1], ko, ki, t[2], t[3]});
        }
        if (variant != "blocking") s[C].vectorize(t[3]);
        return m;
    }
    schedule_micro_kernel(m, variant != "cache_write", variant == "parallel");
    return m;
}

}  // namespace anvil::examples
