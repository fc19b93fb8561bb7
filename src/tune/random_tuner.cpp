// After the default, configurations drawn uniformly among those never proposed.
#include "tune/tuner_base.h"
#include "tune/tuners.h"

namespace anvil::tune {

namespace {

class RandomTuner final : public TunerBase {
public:
    using TunerBase::TunerBase;

private:
    void propose(int n, std::vector<Config>& out) override {
        for (int i = 0; i < n; ++i) {
            auto c = draw_fresh();
            if (!c) return;
            take(*c, out);
        }
    }
};

}  // namespace

std::unique_ptr<Tuner> make_random_tuner(const te::ConfigSpace& space, uint64_t seed) {
    return std::make_unique<RandomTuner>(space, seed);
}

}  // namespace anvil::tune
