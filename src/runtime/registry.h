// The global function registry: name -> PackedFunc, shared by the C and C++ APIs.
//
// Nothing registers itself at static-initialisation time; whoever needs a function registers it
// explicitly (the compiler at startup, a host program through anvil_func_register).
#pragma once

#include <string>
#include <vector>

#include "runtime/packed_func.h"

namespace anvil::runtime {

// Throws UserError when `name` is taken and `override` is false, or when `func` is null.
void register_global_func(const std::string& name, PackedFunc func, bool override = false);
// The function registered as `name`, or a null PackedFunc.
PackedFunc get_global_func(const std::string& name);
// Returns whether `name` was registered.
bool remove_global_func(const std::string& name);
// Sorted.
std::vector<std::string> list_global_func_names();

}  // namespace anvil::runtime
