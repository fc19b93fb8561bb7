// The subcommands of `anvil`: each adds its options to the parser and runs when chosen.
#pragma once

#include <CLI/CLI.hpp>

namespace anvil::cli {

// Each returns the process exit status; errors in the model or arguments surface as
// anvil::UserError and are printed by main.
void add_compile_command(CLI::App& app, int* status);
void add_run_command(CLI::App& app, int* status);
void add_inspect_command(CLI::App& app, int* status);
void add_tune_command(CLI::App& app, int* status);
void add_train_cost_model_command(CLI::App& app, int* status);
void add_rpc_command(CLI::App& app, int* status);

}  // namespace anvil::cli
