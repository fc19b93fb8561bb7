// Fuzz harness: the graph IR's text format. Text that parses (with type inference) must print
// back to text that parses and prints the same again. Seeds: the golden before/after files and
// the examples' module text.
#include "fuzz_target.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "ops/op_table.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    anvil::fuzz::write_seeds_if_asked({});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    auto parse = [](const std::string& text) { return graph::parse_module(text, ops::op_table()); };
    std::string text(fuzz::as_text(data, size));
    graph::IRModule m;
    bool parsed = false;
    fuzz::expect_only_user_errors([&] {
        m = parse(text);
        parsed = true;
    });
    if (!parsed) return 0;
    fuzz::expect_print_parse_round_trip(
        m, [](const graph::IRModule& x) { return graph::print(x); }, parse, "module");
    return 0;
}
