// The every-op cases of the ops that are not numeric kernels: call_tir (a hand-written loop-IR
// kernel) and call_packed (a registry function), shape values bound at run time (bind_values,
// arange, dynamic_reshape, shape_tensor), control flow (control.if both ways, control.loop),
// sequences and optionals, and strings. Each runs end to end on the VM and its result is
// checked against values worked out here.
#include <algorithm>
#include <cctype>

#include "every_op.h"
#include "runtime/registry.h"
#include "runtime/string_tensor.h"

namespace anvil::every_op {
namespace {

using Values = std::vector<double>;

Want strings_want(Shape shape, std::vector<std::string> s) {
    Want w;
    w.shape = std::move(shape);
    w.dtype = "string";
    w.strings = std::move(s);
    return w;
}

Want none_want() {
    Want w;
    w.kind = VMValue::Kind::none;
    return w;
}

// A slice of the columns [begin, end) of a rows x cols matrix.
Values columns(const Values& v, int64_t rows, int64_t cols, int64_t begin, int64_t end) {
    Values out;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = begin; c < end; ++c) out.push_back(v[r * cols + c]);
    return out;
}

Values concat(Values a, const Values& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Y = X * 3 + B (broadcast along rows), written in the loop IR.
constexpr const char* kAffineKernel = R"(
prim_func affine(X: float32[n, m], B: float32[m], Y: float32[n, m]) {
  for i in [0, n) {
    for j in [0, m) {
      Y[i, j] = X[i, j] * 3.0f + B[j]
    }
  }
}
)";

std::vector<OpCase> call_cases() {
    std::vector<OpCase> cases;
    NDArray x = rand_f32({5, 7}, 401), b = rand_f32({7}, 402);
    Values xv = values_of(x), bv = values_of(b), want;
    for (int64_t i = 0; i < 35; ++i) want.push_back(xv[i] * 3 + bv[i % 7]);
    cases.push_back({"call_tir of a loop-IR kernel",
                     "def @main(%x: " + tensor_type({5, 7}) + ", %b: " + tensor_type({7}) +
                         ") { call_tir(@affine, (%x, %b), " + tensor_type({5, 7}) + ") }\n" +
                         kAffineKernel,
                     {x, b},
                     tensor_want({5, 7}, want, 1e-6)});
    // A host function in the registry, called in destination-passing style (output last):
    // y = x * x - 1.
    runtime::register_global_func(
        "every_op.square_minus_one",
        runtime::PackedFunc([](const runtime::Args& args, runtime::RetValue*) {
            const DLTensor* in = args[0].as_tensor();
            DLTensor* out = args[1].as_tensor();
            int64_t n = 1;
            for (int d = 0; d < in->ndim; ++d) n *= in->shape[d];
            const float* p = static_cast<const float*>(in->data);
            float* q = static_cast<float*>(out->data);
            for (int64_t i = 0; i < n; ++i) q[i] = p[i] * p[i] - 1;
        }),
        true);
    want.clear();
    for (double v : xv) want.push_back(v * v - 1);
    cases.push_back({"call_packed of a registry function",
                     "def @main(%x: " + tensor_type({5, 7}) +
                         ") { call_packed(\"every_op.square_minus_one\", (%x,), " +
                         tensor_type({5, 7}) + ") }",
                     {x},
                     tensor_want({5, 7}, want, 1e-6)});
    return cases;
}

std::vector<OpCase> shape_value_cases() {
    std::vector<OpCase> cases;
    // ONNX Range as the importer writes it: the bounds bound to dimension variables, the length
    // ceil((limit - start) / delta) a dimension, arange making the values.
    const char* range = R"(
def @main(%start: Tensor[(), int64], %limit: Tensor[(), int64], %delta: Tensor[(), int64]) {
  %0 = bind_values(%start, %start, vars=(a,));
  %1 = bind_values(%0, %limit, vars=(b,));
  %2 = bind_values(%1, %delta, vars=(c,), checks=(c != 0i64,));
  arange(%2, %delta, length=(max(0i64 - floordiv(a - b, c), 0i64),))
}
)";
    cases.push_back(
        {"bind_values + arange 3 to -11 by -3",
         range,
         {array_of({}, {3}, "int64"), array_of({}, {-11}, "int64"), array_of({}, {-3}, "int64")},
         tensor_want({5}, {3, 0, -3, -6, -9}, 0, "int64")});
    cases.push_back(
        {"bind_values + arange 2 to 13 by 5",
         range,
         {array_of({}, {2}, "int64"), array_of({}, {13}, "int64"), array_of({}, {5}, "int64")},
         tensor_want({3}, {2, 7, 12}, 0, "int64")});
    // dynamic_reshape to shape values read at run time: [-1, 21] of a 3x5x7 tensor.
    NDArray x = rand_f32({3, 5, 7}, 411);
    cases.push_back({"dynamic_reshape [-1, 21]",
                     "def @main(%x: " + tensor_type({3, 5, 7}) + ", %s: " +
                         tensor_type({2}, "int64") + ") { dynamic_reshape(%x, %s, dims=(r0, r1)) }",
                     {x, array_of({2}, {-1, 21}, "int64")},
                     tensor_want({5, 21}, values_of(x), 0)});
    // shape_tensor of a symbolic batch: the VM computes [n, 7] from the input's shape.
    cases.push_back({"shape_tensor of a symbolic dimension",
                     "def @main(%x: Tensor[(n, 7), float32]) { shape_tensor(%x, values=(n * 2, "
                     "7), shape=[2]) }",
                     {rand_f32({11, 7}, 412)},
                     tensor_want({2}, {22, 7}, 0, "int64")});
    return cases;
}

std::vector<OpCase> control_cases() {
    std::vector<OpCase> cases;
    // control.if: branches of different result lengths (5 and 15), the result's length bound at
    // run time.
    const char* branches = R"(
def @main(%c: Tensor[(), bool], %x: Tensor[(5,), float32]) {
  %0 = control.if(%c, %x, %x, then_branch="same", else_branch="thrice", num_then_args=1,
                  out_shapes=(d,), out_ndims=[1], out_dtypes="float32");
  add(%0, %0)
}
def @same(%a: Tensor[(5,), float32]) { %a }
def @thrice(%a: Tensor[(5,), float32]) { concatenate(%a, %a, %a, axis=0) }
)";
    NDArray x = array_of({5}, {1.5, -2, 0.25, 3, -0.5});
    const std::vector<double> doubled = {3, -4, 0.5, 6, -1};
    std::vector<double> doubled_thrice;
    for (int k = 0; k < 3; ++k) {
        doubled_thrice.insert(doubled_thrice.end(), doubled.begin(), doubled.end());
    }
    cases.push_back({"control.if then",
                     branches,
                     {array_of({}, {1}, "bool"), x},
                     tensor_want({5}, doubled, 0)});
    cases.push_back({"control.if else",
                     branches,
                     {array_of({}, {0}, "bool"), x},
                     tensor_want({15}, doubled_thrice, 0)});
    // control.loop: v += s * i for i < n (a captured value s), cond kept true.
    const char* loop = R"(
def @main(%n: Tensor[(), int64], %c: Tensor[(), bool], %y: Tensor[(3,), float32], %s: Tensor[(3,), float32]) {
  control.loop(%n, %c, %y, %s, body="step", num_carried=1, out_shapes=(3,), out_ndims=[1],
               out_dtypes="float32")
}
def @step(%i: Tensor[(), int64], %cond: Tensor[(), bool], %v: Tensor[(3,), float32], %s: Tensor[(3,), float32]) {
  %f = cast(%i, dtype="float32");
  (%cond, add(%v, multiply(%s, %f)))
}
)";
    NDArray y = rand_f32({3}, 421), s = rand_f32({3}, 422);
    for (int64_t n : {0, 5}) {
        Values want = values_of(y), sv = values_of(s);
        for (int k = 0; k < 3; ++k) want[k] += sv[k] * double(n * (n - 1) / 2);
        cases.push_back({"control.loop " + std::to_string(n) + " trips",
                         loop,
                         {array_of({}, {double(n)}, "int64"), array_of({}, {1}, "bool"), y, s},
                         tensor_want({3}, want, 1e-6)});
    }
    return cases;
}

std::vector<OpCase> sequence_cases() {
    std::vector<OpCase> cases;
    // [a, b] -> insert c before 1: [a, c, b] -> erase at -3: [c, b]; then its length, the
    // element at 1 (b), both concatenations, a sequence grown from empty, and a[:, 2 | 2 | 1]
    // split into a sequence by a 0-D size.
    const char* text = R"(
def @main(%a: Tensor[(3, 5), float32], %b: Tensor[(3, 5), float32], %c: Tensor[(3, 5), float32],
          %p: Tensor[(), int64], %q: Tensor[(1,), int64], %k: Tensor[(), int64]) {
  %s = seq.construct(%a, %b);
  %t = seq.insert(%s, %c, %p);
  %u = seq.erase(%t, %q);
  %n = seq.length(%u);
  %e = seq.at(%u, %p, out_shapes=(3, 5), out_ndims=[2], out_dtypes="float32");
  %w = seq.concat(%u, axis=1, out_shapes=(3, j), out_ndims=[2], out_dtypes="float32");
  %d = seq.concat(%u, axis=0, new_axis=True, out_shapes=(l, 3, 5), out_ndims=[3], out_dtypes="float32");
  %z = seq.empty(out_ndims=[-2], out_dtypes="sequence float32");
  %g = seq.insert(%z, %a);
  %h = seq.split(%a, %k, axis=1);
  (%n, %e, %w, %d, %g, %h)
}
)";
    NDArray a = rand_f32({3, 5}, 431), b = rand_f32({3, 5}, 432), c = rand_f32({3, 5}, 433);
    Values av = values_of(a), bv = values_of(b), cv = values_of(c);
    Values side;  // [c | b] along axis 1
    for (int64_t r = 0; r < 3; ++r) {
        side = concat(side, Values(cv.begin() + r * 5, cv.begin() + r * 5 + 5));
        side = concat(side, Values(bv.begin() + r * 5, bv.begin() + r * 5 + 5));
    }
    Want want = tuple_want({
        tensor_want({}, {2}, 0, "int64"),
        tensor_want({3, 5}, bv, 0),
        tensor_want({3, 10}, side, 0),
        tensor_want({2, 3, 5}, concat(cv, bv), 0),
        tuple_want({tensor_want({3, 5}, av, 0)}),
        tuple_want({tensor_want({3, 2}, columns(av, 3, 5, 0, 2), 0),
                    tensor_want({3, 2}, columns(av, 3, 5, 2, 4), 0),
                    tensor_want({3, 1}, columns(av, 3, 5, 4, 5), 0)}),
    });
    cases.push_back({"seq.* on a sequence of three 3x5 tensors",
                     text,
                     {a, b, c, array_of({}, {1}, "int64"), array_of({1}, {-3}, "int64"),
                      array_of({}, {2}, "int64")},
                     want});
    // optional.some / none / has_value / get.
    const char* optional = R"(
def @main(%x: Tensor[(3, 5), float32]) {
  %o = optional.some(%x);
  %e = optional.none(out_shapes=(3, 5), out_ndims=[2], out_dtypes="optional float32");
  (optional.has_value(%o), optional.get(%o), optional.has_value(%e), %e)
}
)";
    cases.push_back({"optional.*",
                     optional,
                     {a},
                     tuple_want({tensor_want({}, {1}, 0, "bool"), tensor_want({3, 5}, av, 0),
                                 tensor_want({}, {0}, 0, "bool"), none_want()})});
    return cases;
}

std::vector<OpCase> string_cases() {
    // StringNormalizer (stopwords removed case-insensitively, then upper case), strings parsed
    // as float32 and int64 written as strings.
    const char* text = R"(
def @main(%x: Tensor[(5,), string], %y: Tensor[(2, 3), string], %z: Tensor[(2, 2), int64]) {
  (string.normalize(%x, case_change="UPPER", case_sensitive=False, stopwords=["the"],
                    out_shapes=(m,), out_ndims=[1], out_dtypes="string"),
   string.parse(%y, dtype="float32"),
   string.format(%z))
}
)";
    NDArray x = runtime::make_string_tensor({5}, {"The", "quick", "THE", "fox", "thé"});
    NDArray y = runtime::make_string_tensor({2, 3}, {"1.5", "-2", "1e3", "0.125", "7", "-0.5"});
    NDArray z = array_of({2, 2}, {12, -7, 0, 123456789}, "int64");
    return {{"string.normalize / parse / format",
             text,
             {x, y, z},
             tuple_want({strings_want({3}, {"QUICK", "FOX", "THÉ"}),
                         tensor_want({2, 3}, {1.5, -2, 1000, 0.125, 7, -0.5}, 0),
                         strings_want({2, 2}, {"12", "-7", "0", "123456789"})})}};
}

}  // namespace

std::vector<OpCase> executor_cases() {
    std::vector<OpCase> cases;
    for (auto* family :
         {call_cases, shape_value_cases, control_cases, sequence_cases, string_cases}) {
        for (OpCase& c : family()) cases.push_back(std::move(c));
    }
    return cases;
}

namespace {

TEST(EveryOp, ExecutorOps) {
    run_cases(executor_cases());
}

}  // namespace
}  // namespace anvil::every_op
