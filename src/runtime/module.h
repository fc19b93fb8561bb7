// Modules: named collections of compiled functions.
//
// A module is loaded from a shared library exported by Anvil (load_module) or built in memory by
// a code generator (a JIT module subclasses ModuleNode in its own library). A PackedFunc obtained
// from a module keeps the module alive, so the code it points at is never unloaded under it.
//
// Unlike IR nodes, modules are not immutable: loading and JIT compilation keep mutable state,
// which is why get_function is non-const and Module hands out a non-const node.
#pragma once

#include <string>
#include <vector>

#include "runtime/packed_func.h"
#include "support/ref.h"

namespace anvil::runtime {

class ModuleNode : public Object {
public:
    ~ModuleNode() override;

    // The function named `name`, or a null PackedFunc when the module has none.
    virtual PackedFunc get_function(const std::string& name) = 0;
    virtual std::vector<std::string> function_names() const = 0;
    // What kind of module this is, for messages: "shared_library", "llvm_jit", ...
    virtual std::string type_key() const;

    // Modules this one imports (TVM's import_module): Module::get_function looks in them, in
    // order, after this module's own functions. A model's kernels import the modules of its
    // external code generators (runtime/external_module.h).
    void import_module(Ref<ModuleNode> m) { imports_.push_back(std::move(m)); }
    const std::vector<Ref<ModuleNode>>& imports() const { return imports_; }

protected:
    // Wraps a C function whose code belongs to this module; the result keeps the module alive.
    // The module must already be held by a Ref (it is, when reached through a Module).
    PackedFunc make_function(AnvilPackedCFunc fn, void* resource = nullptr) const;

private:
    std::vector<Ref<ModuleNode>> imports_;
};

class Module {
public:
    Module() = default;
    explicit Module(Ref<ModuleNode> node) : node_(std::move(node)) {}

    bool defined() const { return node_.defined(); }
    explicit operator bool() const { return defined(); }

    // Null PackedFunc when absent (from this module and its imports); throws UserError when the
    // module is null.
    PackedFunc get_function(const std::string& name) const;
    // This module's functions, then its imports'.
    std::vector<std::string> function_names() const;
    std::string type_key() const;

    ModuleNode* node() const { return const_cast<ModuleNode*>(node_.get()); }
    ModuleNode* operator->() const { return node(); }
    void import_module(const Module& m) const { node()->import_module(m.node_); }
    bool same_as(const Module& other) const { return node_.same_as(other.node_); }

private:
    Ref<ModuleNode> node_;
};

// Loads a shared library exported by Anvil: dlopen(RTLD_NOW | RTLD_LOCAL), then the functions
// listed by its __anvil_function_names symbol. Throws UserError naming the path when the file is
// missing, cannot be loaded, or is not an Anvil module.
Module load_module(const std::string& path);

// Handles for the C API: a new handle holds a reference (anvil_module_free releases it).
AnvilModuleHandle module_new_handle(const Module& module);
Module module_from_handle(AnvilModuleHandle handle);

}  // namespace anvil::runtime
