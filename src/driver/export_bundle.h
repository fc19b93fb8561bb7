// Bundled deployment (anvil compile --bundle): one static library with the runtime, the kernels,
// the plan and the parameters, which a program links like any other (no dlopen, no
// libanvil_runtime.so) and runs through anvil_graph_executor_create_from_bundle (runtime.h).
//
// The library holds one object for the model, in which only the descriptor anvil_bundle_<name>
// is global (kernels and blobs are made local with objcopy, so several bundles link into one
// program), and the objects of the static runtime (libanvil_runtime_static.a), which a target other
// than the host needs built for it (e.g. cmake/aarch64-linux-gnu.cmake).
#pragma once

#include <string>

#include "runtime/module.h"

namespace anvil::driver {

struct BundleOptions {
    std::string cc;               // compiles the descriptor, links the object (default: as
                                  // export_library); its binutils (ar, objcopy) share its prefix
    std::string cc_options;       // added to each of cc's command lines
    std::string runtime_archive;  // default: the host's (default_runtime_archive)
};

// "anvil_bundle_<name>" for an output path: <name> is the file name without its extension, made
// a C identifier (model.a -> anvil_bundle_model, mobilenet-v2.a -> anvil_bundle_mobilenet_v2).
std::string bundle_symbol(const std::string& path);

// The static runtime built with this compiler: $ANVIL_RUNTIME_STATIC, else the build tree's, else
// lib/libanvil_runtime_static.a beside the running program's bin/. UserError when none exists.
std::string default_runtime_archive();

// Writes the bundle of `kernels`, which hold the plan and parameter blobs (their sizes given,
// as the descriptor records them), to `path`; returns the descriptor's symbol. UserError naming
// the tool and its output when a step fails.
std::string export_bundle(const runtime::Module& kernels, const std::string& path,
                          uint64_t plan_size, uint64_t params_size, const BundleOptions& options);

}  // namespace anvil::driver
