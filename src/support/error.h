// Errors raised inside the compiler.
//
//   user_error(loc) << "what is wrong, where, and what to do";   // throws anvil::UserError
//   internal_error() << "invariant broken";                       // throws anvil::InternalError
//   ANVIL_CHECK(cond) << "...";                                    // InternalError unless cond
//
// The builders throw when the full statement ends (from their destructor), so the message can be
// streamed. Exceptions never cross the runtime's C ABI: the C API converts them to a status code
// plus a thread-local last-error string.
#pragma once

#include <exception>
#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>

#include "support/source_loc.h"

namespace anvil {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The user's model, schedule or arguments are wrong.
class UserError : public Error {
public:
    using Error::Error;
};

// Anvil has a bug; the message records where the broken invariant was detected.
class InternalError : public Error {
public:
    using Error::Error;
};

namespace detail {

template <typename E>
class ErrorBuilder {
public:
    explicit ErrorBuilder(std::string prefix)
        : prefix_(std::move(prefix)), uncaught_(std::uncaught_exceptions()) {}
    ErrorBuilder(const ErrorBuilder&) = delete;
    ErrorBuilder& operator=(const ErrorBuilder&) = delete;

    template <typename T>
    ErrorBuilder& operator<<(const T& value) {
        stream_ << value;
        return *this;
    }

    // Throws the error once the streaming expression is complete.
    ~ErrorBuilder() noexcept(false) {
        if (std::uncaught_exceptions() == uncaught_) throw E(prefix_ + stream_.str());
    }

private:
    std::string prefix_;
    std::ostringstream stream_;
    int uncaught_;
};

}  // namespace detail

// `user_error(loc) << ...` throws UserError with "<loc>: <message>".
inline detail::ErrorBuilder<UserError> user_error(const SourceLoc& loc = {}) {
    std::string where = loc.str();
    return detail::ErrorBuilder<UserError>(where.empty() ? "" : where + ": ");
}

// `internal_error() << ...` throws InternalError naming the C++ location that detected it.
inline detail::ErrorBuilder<InternalError> internal_error(
    const std::source_location& at = std::source_location::current()) {
    return detail::ErrorBuilder<InternalError>(std::string("internal error at ") + at.file_name() +
                                               ":" + std::to_string(at.line()) + ": ");
}

}  // namespace anvil

// Internal invariant check: `ANVIL_CHECK(x > 0) << "x was " << x;`
#define ANVIL_CHECK(cond) \
    if (cond) {           \
    } else                \
        ::anvil::internal_error() << "check failed: " #cond ": "

// Marks code that cannot be reached; keeps the compiler's flow analysis honest.
#define ANVIL_UNREACHABLE() __builtin_unreachable()
