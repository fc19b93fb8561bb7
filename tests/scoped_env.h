// An environment variable set (or unset) for one scope and restored after it: for tests of what
// the environment selects (ANVIL_CHECKED), in-process or in the `anvil` processes a test starts.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace anvil::testing {

class ScopedEnv {
public:
    // `value` nullptr unsets the variable.
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        set(value);
    }
    ~ScopedEnv() { set(old_ ? old_->c_str() : nullptr); }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    void set(const char* value) const {
        if (value) {
            setenv(name_.c_str(), value, 1);
        } else {
            unsetenv(name_.c_str());
        }
    }

    std::string name_;
    std::optional<std::string> old_;
};

}  // namespace anvil::testing
