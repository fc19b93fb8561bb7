// The calling thread's last error, and the guard every C API function runs its body in.
//
// Exceptions never cross the C ABI: a C function runs its body inside `catch_to_status`, which
// turns any exception into -1 and records its message for anvil_get_last_error().
#pragma once

#include <exception>
#include <string_view>

#include "anvil/runtime.h"

namespace anvil::runtime {

// Records `message` as this thread's last error; never throws (on allocation failure a fixed
// message is recorded instead).
void set_last_error(std::string_view message) noexcept;
void clear_last_error() noexcept;
// True when this thread's last error is the empty string.
bool last_error_empty() noexcept;
// Records the message of the exception being handled; call only inside a catch block.
void set_last_error_from_current_exception() noexcept;

// Runs `body` (returning an int status) and converts any exception into -1 plus last error.
template <typename F>
int catch_to_status(F&& body) noexcept {
    try {
        return body();
    } catch (...) {
        set_last_error_from_current_exception();
        return -1;
    }
}

}  // namespace anvil::runtime
