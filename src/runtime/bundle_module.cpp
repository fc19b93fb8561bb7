#include "runtime/bundle_module.h"

#include <map>

#include "support/error.h"

namespace anvil::runtime {

namespace {

class BundleModule : public ModuleNode {
public:
    explicit BundleModule(const AnvilBundle& bundle) : release_(bundle.release_packed_functions) {
        for (uint64_t i = 0; i < bundle.num_functions; ++i) {
            const AnvilBundleFunction& f = bundle.functions[i];
            functions_.emplace(f.name, f.function);
            names_.emplace_back(f.name);
        }
    }
    ~BundleModule() override {
        // No kernel of the bundle runs once its last executor is gone.
        if (release_ != nullptr) release_();
    }

    PackedFunc get_function(const std::string& name) override {
        auto it = functions_.find(name);
        return it == functions_.end() ? PackedFunc() : make_function(it->second);
    }
    std::vector<std::string> function_names() const override { return names_; }
    std::string type_key() const override { return "bundle"; }

private:
    std::map<std::string, AnvilPackedCFunc> functions_;
    std::vector<std::string> names_;
    void (*release_)(void);
};

}  // namespace

void check_bundle(const AnvilBundle& bundle) {
    if (bundle.version != ANVIL_BUNDLE_VERSION || bundle.size != sizeof(AnvilBundle)) {
        user_error() << "the bundle was made for another runtime (bundle version " << bundle.version
                     << ", size " << bundle.size << "; this runtime reads version "
                     << ANVIL_BUNDLE_VERSION << ", size " << sizeof(AnvilBundle)
                     << "): compile the model again with this Anvil";
    }
    if (bundle.plan_json == nullptr || (bundle.functions == nullptr && bundle.num_functions > 0) ||
        (bundle.params == nullptr && bundle.params_size > 0)) {
        user_error() << "the bundle's descriptor is incomplete (a NULL plan, function table or "
                        "parameters)";
    }
    for (uint64_t i = 0; i < bundle.num_functions; ++i) {
        if (bundle.functions[i].name == nullptr || bundle.functions[i].function == nullptr) {
            user_error() << "the bundle's function " << i << " has no name or no code";
        }
    }
}

Module bundle_module(const AnvilBundle& bundle) {
    check_bundle(bundle);
    return Module(Ref<ModuleNode>(new BundleModule(bundle)));
}

}  // namespace anvil::runtime
