// What every fuzz harness shares. A harness defines LLVMFuzzerTestOneInput (and optionally
// LLVMFuzzerInitialize) and is linked either with libFuzzer (clang, -fsanitize=fuzzer: the
// scripts/fuzz.sh build) or with replay_main.cpp (any compiler: the short runs of the test
// command, which replay the seeds and regression inputs and then try a fixed number of
// mutations).
//
// Malformed bytes must end in a UserError: a clear message, which is the expected outcome and
// ends the input quietly. Anything else — an InternalError, another exception (std::bad_alloc
// from a size the input made up, std::out_of_range from an unchecked lookup), a crash, a hang or
// a sanitizer report — is a bug, and the harness aborts so the fuzzer keeps the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace anvil::fuzz {

// Runs `body`; returns normally on success or UserError, aborts on anything else.
template <class Body>
void expect_only_user_errors(Body&& body) {
    try {
        body();
    } catch (const UserError&) {
        // The input is malformed and was reported as such.
    } catch (const InternalError& e) {
        std::fprintf(stderr, "fuzz: internal error: %s\n", e.what());
        std::abort();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: unexpected %s: %s\n", typeid(e).name(), e.what());
        std::abort();
    } catch (...) {
        std::fprintf(stderr, "fuzz: unexpected exception of unknown type\n");
        std::abort();
    }
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// The text IR harnesses' round trip: `value` parsed from the input prints to text that `parse`
// reads back and `print` prints identically. The printer's output is ours, so failing to read it
// back is a bug, not a user error: the harness aborts. `what` names the value ("module").
template <class Value, class Print, class Parse>
void expect_print_parse_round_trip(const Value& value, Print&& print, Parse&& parse,
                                   const char* what) {
    const std::string printed = print(value);
    Value again;
    try {
        again = parse(printed);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: printed %s does not parse: %s\n%s\n", what, e.what(),
                     printed.c_str());
        std::abort();
    }
    if (print(again) != printed) {
        std::fprintf(stderr, "fuzz: print(parse(print(%s))) differs from print(%s):\n%s\n", what,
                     what, printed.c_str());
        std::abort();
    }
}

// Seeds a harness makes itself (a compiled model's plan, say) rather than reading them from the
// test data: written to $ANVIL_FUZZ_WRITE_SEEDS/<index> by write_seeds_if_asked, which
// scripts/fuzz.sh calls before fuzzing, and replayed by replay_main.cpp.
void write_seeds_if_asked(const std::vector<std::string>& seeds);
// Set by a harness's LLVMFuzzerInitialize; replay_main.cpp runs them first.
extern std::vector<std::string> built_in_seeds;

}  // namespace anvil::fuzz
