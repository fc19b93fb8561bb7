// Fuzz harness: the auto-scheduler's cost model files (anvil tune --cost-model FILE, the shipped
// data/cost_model/model.json). XgbCostModel::load must take any bytes to a UserError or to a
// model that predicts; ProgramCostModel::load_pretrained must also refuse a model of another
// feature width with a UserError. Seeds: small models the harness trains and saves itself.
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "fuzz_target.h"
#include "tune/program_cost_model.h"
#include "tune/program_features.h"
#include "tune/xgb_cost_model.h"

namespace {

std::string g_path;

std::string saved_model(int width, int rows) {
    anvil::tune::XgbCostModel m(anvil::tune::CostObjective::rank, 1);
    std::vector<float> x;
    std::vector<double> costs;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < width; ++c) x.push_back(static_cast<float>((r * 7 + c) % 5));
        costs.push_back(1.0 + r % 3);
    }
    m.set_rounds(3);
    m.train(x, width, costs);
    m.save(g_path);
    std::ifstream in(g_path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    g_path = "/tmp/anvil_fuzz_cost_model_" + std::to_string(::getpid()) + ".json";
    anvil::fuzz::write_seeds_if_asked(
        {saved_model(2, 8), saved_model(anvil::tune::program_feature_width(), 6)});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    {
        std::ofstream out(g_path, std::ios::binary | std::ios::trunc);
        out << fuzz::as_text(data, size);
    }
    fuzz::expect_only_user_errors([&] {
        tune::XgbCostModel m(tune::CostObjective::rank, 1);
        m.load(g_path);
        std::vector<float> row(static_cast<size_t>(m.width()), 0.5f);
        m.predict(row);
    });
    fuzz::expect_only_user_errors([&] {
        tune::ProgramCostModel m(1);
        m.load_pretrained(g_path);
        m.predict({std::vector<float>(tune::program_feature_width(), 0.5f)});
    });
    std::remove(g_path.c_str());
    return 0;
}
