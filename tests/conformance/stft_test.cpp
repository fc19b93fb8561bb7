// STFT beyond the suite's two cases: the suite's models compiled once and run with other frame
// steps, frame lengths (odd, longer than the step, the whole signal) and windows, which are
// model inputs there; complex signals, two-sided output and a batch from models built here;
// against a direct DFT of each frame in double. Then the errors: at import for what is known
// there, at run time for frame lengths and steps that do not fit the signal.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "conformance/node_model.h"
#include "driver/evaluate.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::contains;
using frontend::testing::ModelBuilder;
using frontend::testing::user_error_of;
using testing::array;

std::vector<float> random_values(size_t count, uint32_t seed) {
    std::vector<float> v(count);
    for (auto& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;  // [-1, 1)
    }
    return v;
}

// [batch, frames, bins, 2] of the signal [batch, n, components], frames of `length` every
// `step` samples, times `window` (empty: ones).
std::vector<double> reference(const std::vector<float>& signal, int64_t batch, int64_t n,
                              int64_t components, int64_t step, int64_t length,
                              const std::vector<float>& window, bool onesided) {
    int64_t frames = (n - length) / step + 1, bins = onesided ? length / 2 + 1 : length;
    std::vector<double> out;
    for (int64_t b = 0; b < batch; ++b) {
        for (int64_t f = 0; f < frames; ++f) {
            for (int64_t k = 0; k < bins; ++k) {
                double re = 0, im = 0;
                for (int64_t j = 0; j < length; ++j) {
                    const float* x = &signal[((b * n) + f * step + j) * components];
                    double w = window.empty() ? 1.0 : window[j];
                    double xr = x[0] * w, xi = components == 2 ? x[1] * w : 0.0;
                    double a = 2 * std::numbers::pi * static_cast<double>((j * k) % length) /
                               static_cast<double>(length);
                    re += xr * std::cos(a) + xi * std::sin(a);
                    im += xi * std::cos(a) - xr * std::sin(a);
                }
                out.push_back(re);
                out.push_back(im);
            }
        }
    }
    return out;
}

void expect_close(const runtime::NDArray& got, const std::vector<double>& want,
                  const std::vector<int64_t>& shape, int64_t length, const std::string& what) {
    EXPECT_EQ(testing::shape_of(got), shape) << what;
    std::vector<float> g = got.to_vector<float>();
    ASSERT_EQ(g.size(), want.size()) << what;
    double tol = 2e-6 * static_cast<double>(length) + 1e-5;
    for (size_t i = 0; i < g.size(); ++i) {
        ASSERT_NEAR(g[i], want[i], tol) << what << " at " << i;
    }
}

class Stft : public testing::NodeModelTest {};

TEST_F(Stft, SuiteModelWithOtherStepsAndFrameLengths) {
    testing::CompiledNodeModel m("test_stft");  // [1, 128, 1], step and length are inputs
    std::vector<float> signal = random_values(128, 5);
    struct Case {
        int64_t step, length;
    };
    for (Case c : std::vector<Case>{{8, 16}, {5, 12}, {3, 9}, {20, 7}, {1, 128}, {50, 1}}) {
        auto out = m.run({array<float>({1, 128, 1}, signal, "float32"),
                          array<int64_t>({}, {c.step}, "int64"),
                          array<int64_t>({}, {c.length}, "int64")})[0];
        std::string what =
            "step " + std::to_string(c.step) + ", length " + std::to_string(c.length);
        expect_close(out, reference(signal, 1, 128, 1, c.step, c.length, {}, true),
                     {1, (128 - c.length) / c.step + 1, c.length / 2 + 1, 2}, c.length, what);
    }
}

TEST_F(Stft, SuiteModelWithOtherStepsAndWindows) {
    testing::CompiledNodeModel m("test_stft_with_window");  // step and a [16] window are inputs
    std::vector<float> signal = random_values(128, 6);
    for (int64_t step : {4, 8, 13, 112}) {
        std::vector<float> window = random_values(16, static_cast<uint32_t>(step));
        auto out =
            m.run({array<float>({1, 128, 1}, signal, "float32"),
                   array<int64_t>({}, {step}, "int64"), array<float>({16}, window, "float32")})[0];
        expect_close(out, reference(signal, 1, 128, 1, step, 16, window, true),
                     {1, (128 - 16) / step + 1, 9, 2}, 16, "step " + std::to_string(step));
    }
}

// A model of STFT over `shape`; the step, window and frame length are initializers when given
// values, inputs when marked run-time, absent otherwise.
struct StftModel {
    std::vector<int64_t> shape;
    int64_t step;
    std::vector<float> window;  // an initializer unless empty
    int64_t length;             // an initializer when > 0
    bool onesided;
    bool run_time_step_and_length = false;  // then both are inputs instead
};

ModelBuilder stft_model(const StftModel& s) {
    ModelBuilder b(17);
    b.input("signal", s.shape);
    std::vector<std::string> inputs = {"signal", "step", "", ""};
    if (s.run_time_step_and_length) {
        b.input("step", {}, ::onnx::TensorProto::INT64);
        b.input("length", {}, ::onnx::TensorProto::INT64);
        inputs[3] = "length";
    } else {
        b.int64_init("step", {}, {s.step});
        if (s.length > 0) {
            b.int64_init("length", {}, {s.length});
            inputs[3] = "length";
        }
    }
    if (!s.window.empty()) {
        b.float_init("window", {static_cast<int64_t>(s.window.size())}, s.window);
        inputs[2] = "window";
    }
    while (inputs.back().empty()) inputs.pop_back();
    auto* n = b.node("STFT", inputs, {"y"}, "stft");
    ModelBuilder::attr_int(n, "onesided", s.onesided);
    b.output("y");
    return b;
}

TEST(StftModels, ComplexTwoSidedBatches) {
    std::vector<float> window = random_values(10, 9);
    std::vector<StftModel> models = {
        {{2, 40, 2}, 6, window, 10, false},   // complex, window and length
        {{2, 40, 2}, 3, window, 0, true},     // complex, onesided
        {{3, 33, 1}, 4, {}, 11, false},       // real, two-sided, odd length
        {{2, 30, 1}, 0, {}, 0, false, true},  // run-time step and length
        {{1, 25, 2}, 0, {}, 0, true, true},   // the same, complex
    };
    for (size_t i = 0; i < models.size(); ++i) {
        const StftModel& s = models[i];
        driver::CompiledModel m = driver::compile_model(stft_model(s).import(), "llvm");
        int64_t batch = s.shape[0], n = s.shape[1], components = s.shape[2];
        std::vector<float> signal =
            random_values(static_cast<size_t>(batch * n * components), 20 + uint32_t(i));
        std::vector<std::pair<int64_t, int64_t>> runs;  // step, length
        if (s.run_time_step_and_length) {
            runs = {{2, 8}, {7, 5}, {1, n}};
        } else {
            runs = {{s.step, s.length > 0 ? s.length : static_cast<int64_t>(s.window.size())}};
        }
        for (auto [step, length] : runs) {
            std::vector<runtime::NDArray> inputs = {array<float>(s.shape, signal, "float32")};
            if (s.run_time_step_and_length) {
                inputs.push_back(array<int64_t>({}, {step}, "int64"));
                inputs.push_back(array<int64_t>({}, {length}, "int64"));
            }
            auto out = driver::run_in_process(m.module, m.kernels, inputs)[0];
            int64_t bins = s.onesided ? length / 2 + 1 : length;
            expect_close(
                out, reference(signal, batch, n, components, step, length, s.window, s.onesided),
                {batch, (n - length) / step + 1, bins, 2}, length,
                "model " + std::to_string(i) + ", step " + std::to_string(step));
        }
    }
}

TEST(StftModels, RunTimeFrameLengthMustMatchTheWindow) {
    std::vector<float> window = random_values(10, 4), signal = random_values(30, 5);
    StftModel s{{1, 30, 1}, 0, window, 0, true, true};
    driver::CompiledModel m = driver::compile_model(stft_model(s).import(), "llvm");
    auto run = [&](int64_t length) {
        return driver::run_in_process(
            m.module, m.kernels,
            {array<float>(s.shape, signal, "float32"), array<int64_t>({}, {3}, "int64"),
             array<int64_t>({}, {length}, "int64")})[0];
    };
    expect_close(run(10), reference(signal, 1, 30, 1, 3, 10, window, true), {1, 7, 6, 2}, 10,
                 "frame_length 10");
    std::string e = user_error_of([&] { run(9); });
    EXPECT_TRUE(contains(e, "node 'stft': STFT")) << e;
    EXPECT_TRUE(contains(e, "frame_length = 9")) << e;
}

TEST(StftModels, ImportErrorsNameTheNode) {
    auto error_of = [](const StftModel& s) {
        return user_error_of([&] { stft_model(s).import(); });
    };
    std::string e = error_of({{1, 16, 1}, 4, {}, 0, true});
    EXPECT_TRUE(contains(e, "node 'stft' (STFT, opset 17): needs a window or a frame_length")) << e;
    e = error_of({{1, 16}, 4, {}, 8, true});
    EXPECT_TRUE(contains(e,
                         "the signal must be [batch, length, 1] (real) or [batch, length, 2] "
                         "(complex), got Tensor[(1, 16), float32]"))
        << e;
    e = error_of({{1, 16, 1}, 0, {}, 8, true});
    EXPECT_TRUE(contains(e, "node 'stft' (STFT, opset 17): frame_step must be positive, got 0"))
        << e;
    e = error_of({{1, 16, 1}, 4, {}, 20, true});
    EXPECT_TRUE(contains(e, "the frame length 20 exceeds the signal's length 16")) << e;
    e = error_of({{1, 16, 1}, 4, random_values(6, 1), 8, true});
    EXPECT_TRUE(contains(e, "frame_length 8 differs from the window's length 6")) << e;
}

TEST_F(Stft, RunTimeValuesThatDoNotFitAreErrors) {
    testing::CompiledNodeModel m("test_stft");
    auto run = [&](int64_t step, int64_t length) {
        return user_error_of([&] {
            m.run({array<float>({1, 128, 1}, random_values(128, 1), "float32"),
                   array<int64_t>({}, {step}, "int64"), array<int64_t>({}, {length}, "int64")});
        });
    };
    std::string e = run(4, 200);
    EXPECT_TRUE(contains(e, "node '#0': STFT")) << e;
    EXPECT_TRUE(contains(e, "frame_length <= 128")) << e;
    EXPECT_TRUE(contains(e, "frame_length = 200")) << e;
    e = run(0, 16);
    EXPECT_TRUE(contains(e, "1 <= frame_step")) << e;
    e = run(4, 0);
    EXPECT_TRUE(contains(e, "1 <= frame_length")) << e;
}

}  // namespace
}  // namespace anvil
