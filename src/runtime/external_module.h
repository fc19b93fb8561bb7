// Modules of external code generators (BYOC, codegen/external/): the graph regions a compiler
// such as oneDNN took are compiled by its code generator into bytes (a description of each region
// and its weights), stored in the model library; at load time that compiler's runtime library,
// libanvil_runtime_<compiler>.so, makes a module of them (oneDNN: its primitives, created once).
//
// The core runtime links none of those libraries: it opens one only when a model needs it, from
// the directory libanvil_runtime.so lies in (then the dynamic loader's search path). A runtime
// library defines one C function,
//
//   int anvil_external_module_create(const void* bytes, size_t size, AnvilModuleHandle* out);
//
// returning 0 and a new module handle, or -1 with anvil_set_last_error. Its module's functions
// are called like kernels: one DLTensor* per argument, then one per output.
#pragma once

#include <string>

#include "runtime/module.h"

namespace anvil::runtime {

class ExternalModuleNode : public ModuleNode {
public:
    ExternalModuleNode(std::string compiler, std::string bytes, Module functions)
        : compiler_(std::move(compiler)),
          bytes_(std::move(bytes)),
          functions_(std::move(functions)) {}

    PackedFunc get_function(const std::string& name) override {
        return functions_.get_function(name);
    }
    std::vector<std::string> function_names() const override { return functions_.function_names(); }
    std::string type_key() const override { return "external:" + compiler_; }

    const std::string& compiler() const { return compiler_; }
    // What the code generator wrote: what an exported library stores to load this module again.
    const std::string& bytes() const { return bytes_; }

private:
    std::string compiler_;
    std::string bytes_;
    Module functions_;
};

// The module libanvil_runtime_<compiler>.so makes of `bytes`. UserError naming the compiler when
// the library is missing or rejects the bytes.
Module load_external_module(const std::string& compiler, std::string bytes);

// The file name of a compiler's runtime library: "libanvil_runtime_dnnl.so".
std::string external_runtime_library(const std::string& compiler);

}  // namespace anvil::runtime
