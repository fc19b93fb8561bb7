// Every configuration in index order (the first knob varies fastest), after the default, skipping
// those already proposed or resumed.
#include "tune/tuner_base.h"
#include "tune/tuners.h"

namespace anvil::tune {

namespace {

class GridTuner final : public TunerBase {
public:
    explicit GridTuner(const te::ConfigSpace& space)
        : TunerBase(space, /*seed=*/0), cursor_(config_at(space, 0)) {}

private:
    void propose(int n, std::vector<Config>& out) override {
        const size_t want = out.size() + static_cast<size_t>(n);
        while (out.size() < want && !done_) {
            take(cursor_, out);
            done_ = !next_in_index_order(space(), cursor_);
        }
    }

    Config cursor_;
    bool done_ = false;
};

}  // namespace

std::unique_ptr<Tuner> make_grid_tuner(const te::ConfigSpace& space) {
    return std::make_unique<GridTuner>(space);
}

}  // namespace anvil::tune
