// Fuzz harness: the loop IR's text format. A function that parses and verifies must print back
// to text that parses to the same function (module text is where users write such functions).
// Seeds: the TIR golden files.
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
    std::string printed = tir::print(f);
    try {
        Ref<tir::PrimFunc> again = tir::parse_prim_func(printed);
        if (tir::print(again) != printed) {
            std::fprintf(stderr, "fuzz: print(parse(print(f))) differs from print(f):\n%s\n",
                         printed.c_str());
            std::abort();
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: printed function does not parse: %s\n%s\n", e.what(),
                     printed.c_str());
        std::abort();
    }
    return 0;
}
