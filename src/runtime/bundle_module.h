// The kernels of a bundled model (anvil compile --bundle; runtime.h's AnvilBundle): a module over
// the bundle's function table, linked into the program, so nothing is loaded at run time.
#pragma once

#include "anvil/runtime.h"
#include "runtime/module.h"

namespace anvil::runtime {

// Checks the descriptor (version, size, tables); UserError saying what does not fit.
void check_bundle(const AnvilBundle& bundle);

// The module of `bundle`'s functions; the bundle (static data of the program) outlives it.
Module bundle_module(const AnvilBundle& bundle);

}  // namespace anvil::runtime
