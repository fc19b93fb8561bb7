// Fuzz harness: the loop IR's text format. A function that parses and verifies must print back
// to text that parses and prints the same again (module text is where users write such
// functions). Seeds: the TIR golden files.
#include "fuzz_target.h"
#include "tir/parser.h"
#include "tir/printer.h"
#include "tir/verifier.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    anvil::fuzz::write_seeds_if_asked({});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    std::string text(fuzz::as_text(data, size));
    Ref<tir::PrimFunc> f;
    fuzz::expect_only_user_errors([&] {
        f = tir::parse_prim_func(text);
        tir::check_user_function(f);
    });
    if (!f) return 0;
    fuzz::expect_print_parse_round_trip(
        f, [](const Ref<tir::PrimFunc>& x) { return tir::print(x); },
        [](const std::string& t) { return tir::parse_prim_func(t); }, "function");
    return 0;
}
