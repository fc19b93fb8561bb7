// What every error test checks: a statement raises a UserError whose message contains each given
// part (the node, the op, what was expected), e.g.
//   EXPECT_MESSAGE(parse_shape_buckets({"n"}), "--shape-buckets", "is not NAME=SIZE");
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "support/error.h"

namespace anvil::errors_test {

// The UserError's message; a test failure (and "") when none is raised.
inline std::string user_error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    ADD_FAILURE() << "no UserError raised";
    return "";
}

}  // namespace anvil::errors_test

#define EXPECT_MESSAGE(statement, ...)                                                 \
    do {                                                                               \
        std::string message = ::anvil::errors_test::user_error_of([&] { statement; }); \
        for (const char* part : {__VA_ARGS__}) {                                       \
            EXPECT_NE(message.find(part), std::string::npos)                           \
                << "message: " << message << "\nmissing: " << part;                    \
        }                                                                              \
    } while (0)
