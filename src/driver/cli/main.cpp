// anvil: compile, run and inspect models.
//
//   anvil compile model.onnx --target "llvm -mcpu=native" -o model.so
//   anvil run model.so --inputs test_data_set_0 --compare test_data_set_0 --print-time
//   anvil inspect model.onnx
//   anvil tune model.onnx --time-budget 10m -o records.json  (then compile --tuning-records)
//   anvil rpc server --port 9090 --auth-key KEY      (then anvil run model.so --rpc HOST:9090)
//   anvil compile model.pt --input-shapes "input0:[1,3,224,224]" -o model.so  (torch.jit.save)
//
// Exit status: 0 on success, 1 when the model, the inputs or a comparison fail (the message says
// what and where, no stack trace), 2 for bad usage.
#include <cstdio>

#include "commands.h"
#include "support/error.h"

int main(int argc, char** argv) {
    CLI::App app{"Anvil: a deep-learning compiler", "anvil"};
    app.require_subcommand(1);
    int status = 0;
    anvil::cli::add_compile_command(app, &status);
    anvil::cli::add_run_command(app, &status);
    anvil::cli::add_inspect_command(app, &status);
    anvil::cli::add_tune_command(app, &status);
    anvil::cli::add_train_cost_model_command(app, &status);
    anvil::cli::add_rpc_command(app, &status);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    } catch (const anvil::Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return status;
}
