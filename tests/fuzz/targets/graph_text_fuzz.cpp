// Fuzz harness: the graph IR's text format. Text that parses (with type inference) must print
// back to text that parses to the same module. Seeds: the golden before/after files and the
// examples' module text.
#include "fuzz_target.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "ops/op_table.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    anvil::fuzz::write_seeds_if_asked({});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    std::string text(fuzz::as_text(data, size));
    graph::IRModule m;
    bool parsed = false;
    fuzz::expect_only_user_errors([&] {
        m = graph::parse_module(text, ops::op_table());
        parsed = true;
    });
    if (!parsed) return 0;
    // The printer's output is ours: failing to read it back is a bug, not a user error.
    std::string printed = graph::print(m);
    graph::IRModule again;
    try {
        again = graph::parse_module(printed, ops::op_table());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: printed module does not parse: %s\n%s\n", e.what(),
                     printed.c_str());
        std::abort();
    }
    if (graph::print(again) != printed) {
        std::fprintf(stderr, "fuzz: print(parse(print(m))) differs from print(m):\n%s\n",
                     printed.c_str());
        std::abort();
    }
    return 0;
}
