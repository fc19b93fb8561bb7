// anvil-build TARGET LIBRARY KERNEL.tir...: compiles one candidate for the tuner.
//
// build_in_child (build_in_child.cpp) starts this program once per candidate, so a compile that
// never ends can be killed and one that crashes LLVM takes only this process with it. Each
// KERNEL.tir is a lowered PrimFunc in the loop IR's text form (tir/printer.h, after every
// loop-IR pass); they are compiled together for TARGET (Target::str()) and linked into the shared
// library LIBRARY, as the tuning session would have in its own process.
//
// Exit status: 0 with LIBRARY written; 1 when the kernels do not compile (the message on
// stderr); 2 for a wrong command line.
#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/llvm/llvm_module.h"
#include "codegen/target.h"
#include "support/error.h"
#include "support/large_stack.h"
#include "tir/parser.h"
#include "tune/helper_process.h"

namespace {

std::string read_kernel(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) anvil::user_error() << "cannot read the kernel '" << path << "'";
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr,
                     "usage: anvil-build TARGET LIBRARY KERNEL.tir...\n"
                     "Compiles one candidate for the tuner (started by anvil tune).\n");
        return 2;
    }
    anvil::tune::become_tuning_helper();
    try {
        // Parsing and code generation recurse over nested expressions: on a large stack, as the
        // tuning session lowers and prints them.
        anvil::call_with_large_stack([&] {
            anvil::Target target = anvil::Target::parse(argv[1]);
            std::vector<anvil::Ref<anvil::tir::PrimFunc>> kernels;
            for (int i = 3; i < argc; ++i) {
                const std::string text = read_kernel(argv[i]);
                try {
                    kernels.push_back(anvil::tir::parse_prim_func(text));
                } catch (const anvil::UserError& e) {
                    // The tuner printed it: text that does not parse back is Anvil's bug, not
                    // the candidate's.
                    anvil::user_error() << "internal error: the printed kernel " << argv[i]
                                        << " does not parse back: " << e.what();
                }
            }
            anvil::runtime::Module module = anvil::codegen::build_llvm(kernels, target);
            anvil::codegen::export_library(module, argv[2]);
        });
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "anvil-build: unknown exception\n");
    }
    return 1;
}
