// Converters of ONNX's text ops: StringNormalizer (an executor op on string tensors,
// ops/string.h) and TfIdfVectorizer over integer tokens, from ordinary ops.
//
// TfIdfVectorizer:
// For each n-gram length n and skip k (0..max_skip_count; unigrams once), the windows
// W[b, s, j] = x[b, s + j (k + 1)] are n shifted slices of the input stacked on a new axis;
// comparing them with the pool's n-grams P[g, j] and requiring all j to match counts each pool
// entry per row (a sum over s). The counts go to their output columns (ngram_indexes) through
// a constant one-hot matrix, then TF, IDF or TFIDF weighting.
#include <algorithm>

#include "frontend/onnx/convert_ops.h"
#include "ops/reduce.h"
#include "ops/string.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// x[:, begin : begin + length] of a [B, C] tensor.
Expr columns(ConvertContext& ctx, const Expr& x, int64_t begin, int64_t length) {
    auto a = make_ref<ops::StridedSliceAttrs>();
    auto* s = const_cast<ops::StridedSliceAttrs*>(a.get());
    s->begin = {begin};
    s->end = {begin + length};
    s->axes = {1};
    return ctx.call("strided_slice", {x}, a);
}

}  // namespace

Exprs convert_tfidf_vectorizer(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    if (shape.empty() || shape.size() > 2) ctx.error() << "the input must be [C] or [N, C]";
    if (!ctx.tensor_type(x, "the input").dtype.is_integer()) {
        ctx.error() << "only integer tokens are supported (pool_int64s), not strings";
    }
    bool batched = shape.size() == 2;
    int64_t rows = batched ? shape[0] : 1, length = shape.back();
    x = cast_to(ctx, reshape_to(ctx, x, {rows, length}), DataType::int64());
    std::string mode = ctx.attr_string("mode", "");
    if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
        ctx.error() << "mode must be TF, IDF or TFIDF, got '" << mode << "'";
    }
    int64_t min_n = ctx.attr_int("min_gram_length", 1), max_n = ctx.attr_int("max_gram_length", 1);
    int64_t max_skip = ctx.attr_int("max_skip_count", 0);
    std::vector<int64_t> starts = ctx.attr_ints("ngram_counts");
    std::vector<int64_t> indexes = ctx.attr_ints("ngram_indexes");
    std::vector<int64_t> pool = ctx.attr_ints("pool_int64s");
    std::vector<float> weights = ctx.attr_floats("weights");
    if (pool.empty()) ctx.error() << "pool_int64s is required (string pools are not supported)";
    if (min_n < 1 || max_n < min_n || max_skip < 0) {
        ctx.error() << "bad gram lengths " << min_n << ".." << max_n << " or skip count";
    }
    if (indexes.empty()) ctx.error() << "ngram_indexes is empty";
    int64_t outputs = *std::max_element(indexes.begin(), indexes.end()) + 1;
    DataType f32 = DataType::float32(), i64 = DataType::int64();
    Expr result;       // [rows, outputs] float32
    size_t entry = 0;  // the pool entry (index into ngram_indexes) of the first n-gram of length n
    for (size_t level = 0; level < starts.size(); ++level) {
        auto n = static_cast<int64_t>(level + 1);
        int64_t begin = starts[level];
        int64_t end =
            level + 1 < starts.size() ? starts[level + 1] : static_cast<int64_t>(pool.size());
        if (begin > end || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0) {
            ctx.error() << "ngram_counts " << ints_str(starts) << " do not fit the pool of "
                        << pool.size() << " values";
        }
        int64_t grams = (end - begin) / n;
        size_t first_entry = entry;
        entry += static_cast<size_t>(grams);
        if (grams == 0 || n < min_n || n > max_n) continue;
        if (entry > indexes.size()) ctx.error() << "ngram_indexes has too few values";
        Expr table = ctx.constant_int64(
            std::vector<int64_t>(pool.begin() + begin, pool.begin() + end), {grams, n});  // P[g, j]
        Expr counts;  // [rows, grams] int64
        for (int64_t k = 0; k <= (n == 1 ? 0 : max_skip); ++k) {
            int64_t span = (n - 1) * (k + 1);
            int64_t windows = length - span;
            if (windows <= 0) break;
            std::vector<Expr> taps;
            for (int64_t j = 0; j < n; ++j) {
                taps.push_back(expand_dims(ctx, columns(ctx, x, j * (k + 1), windows), 2));
            }
            auto cat = make_ref<ops::ConcatenateAttrs>();
            const_cast<ops::ConcatenateAttrs*>(cat.get())->axis = 2;
            Expr w = taps.size() == 1 ? taps[0] : ctx.call("concatenate", taps, cat);  // [r, s, n]
            Expr differ = ctx.call("not_equal", {expand_dims(ctx, w, 2), table});  // [r, s, g, n]
            Expr mismatches = reduce_over(ctx, "sum", cast_to(ctx, differ, i64), 3);
            Expr hits =
                cast_to(ctx, ctx.call("equal", {mismatches, ctx.constant_scalar(i64, 0)}), i64);
            Expr c = reduce_over(ctx, "sum", hits, 1);  // [r, g]
            counts = counts.defined() ? ctx.call("add", {counts, c}) : c;
        }
        if (!counts.defined()) continue;
        // Column indexes[first_entry + g] gets count g.
        runtime::NDArray onehot =
            runtime::NDArray::empty({grams, outputs}, graph::dl_dtype_of(f32));
        std::fill_n(onehot.data<float>(), grams * outputs, 0.0f);
        for (int64_t g = 0; g < grams; ++g) {
            int64_t column = indexes[first_entry + static_cast<size_t>(g)];
            if (column < 0) ctx.error() << "ngram_indexes has the negative value " << column;
            onehot.data<float>()[g * outputs + column] = 1.0f;
        }
        Expr placed = reduce_over(
            ctx, "sum",
            ctx.call("multiply",
                     {expand_dims(ctx, cast_to(ctx, counts, f32), 2), ctx.constant(onehot)}),
            1);
        result = result.defined() ? ctx.call("add", {result, placed}) : placed;
    }
    if (!result.defined()) {
        auto zeros = make_ref<ops::BroadcastToAttrs>();
        const_cast<ops::BroadcastToAttrs*>(zeros.get())->shape = {rows, outputs};
        result = ctx.call("broadcast_to", {ctx.constant_scalar(f32, 0.0)}, zeros);
    }
    if (!weights.empty() && static_cast<int64_t>(weights.size()) != outputs) {
        ctx.error() << "weights has " << weights.size() << " values for " << outputs << " outputs";
    }
    if (mode != "TF") {
        runtime::NDArray w = runtime::NDArray::empty({outputs}, graph::dl_dtype_of(f32));
        for (int64_t o = 0; o < outputs; ++o)
            w.data<float>()[o] = weights.empty() ? 1.0f : weights[o];
        Expr weight = ctx.constant(w);
        if (mode == "IDF") {  // the weight where the n-gram occurs
            Expr present = ctx.call("greater", {result, ctx.constant_scalar(f32, 0.0)});
            result = ctx.call("where", {present, weight, ctx.constant_scalar(f32, 0.0)});
        } else {
            result = ctx.call("multiply", {result, weight});
        }
    }
    return {batched ? result : reshape_to(ctx, result, {outputs})};
}

Exprs convert_string_normalizer(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    const auto& tt = ctx.tensor_type(x, "the input");
    if (!tt.dtype.is_string()) ctx.error() << "the input must be strings, not " << tt.dtype.str();
    std::string change = ctx.attr_string("case_change_action", "NONE");
    if (change != "NONE" && change != "LOWER" && change != "UPPER") {
        ctx.error() << "case_change_action must be NONE, LOWER or UPPER, got '" << change << "'";
    }
    bool case_sensitive = ctx.attr_int("is_case_sensitive", 0) != 0;
    std::vector<std::string> stopwords = ctx.attr_strings("stopwords");
    // The locale attribute is accepted and not consulted: the case mapping is the same for
    // every locale (runtime/unicode_case.h).
    ctx.attr_string("locale", "");
    // Without stopwords nothing is removed; with them the length is known only at run time.
    graph::Type result = x->type;
    if (!stopwords.empty()) {
        std::vector<PrimExpr> shape = tt.shape;
        if (!shape.empty()) shape.back() = ctx.new_dims(1)[0];
        result = graph::make_tensor_type(std::move(shape), tt.dtype);
    }
    return {ops::make_string_normalize(x, change, case_sensitive, std::move(stopwords), result,
                                       ctx.loc())};
}

}  // namespace anvil::frontend
