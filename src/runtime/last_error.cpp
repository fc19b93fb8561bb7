#include "runtime/last_error.h"

#include <new>
#include <string>

namespace anvil::runtime {
namespace {

// `fallback` is used when the message itself could not be stored (out of memory): reporting some
// error beats throwing from the error path.
struct LastError {
    std::string message;
    const char* fallback = nullptr;
};

LastError& last_error() {
    thread_local LastError error;
    return error;
}

}  // namespace

void set_last_error(std::string_view message) noexcept {
    LastError& error = last_error();
    try {
        error.message.assign(message);
        error.fallback = nullptr;
    } catch (...) {
        error.message.clear();
        error.fallback = "out of memory while recording an error message";
    }
}

void clear_last_error() noexcept {
    LastError& error = last_error();
    error.message.clear();
    error.fallback = nullptr;
}

bool last_error_empty() noexcept {
    const LastError& error = last_error();
    return error.fallback == nullptr && error.message.empty();
}

void set_last_error_from_current_exception() noexcept {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        set_last_error("out of memory");
    } catch (const std::exception& e) {
        set_last_error(e.what());
    } catch (...) {
        set_last_error("unknown C++ exception");
    }
}

}  // namespace anvil::runtime

extern "C" {

void anvil_set_last_error(const char* message) {
    anvil::runtime::set_last_error(message ? message : "");
}

const char* anvil_get_last_error(void) {
    const auto& error = anvil::runtime::last_error();
    return error.fallback ? error.fallback : error.message.c_str();
}

}  // extern "C"
