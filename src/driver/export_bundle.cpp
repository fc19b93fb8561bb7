#include "driver/export_bundle.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/llvm/llvm_module.h"
#include "support/error.h"
#include "support/shell_quote.h"

namespace anvil::driver {

namespace fs = std::filesystem;

namespace {

// Runs a shell command; UserError with `what` and the command's output when it fails.
void run_tool(const std::string& command, const std::string& what, const fs::path& log) {
    int rc = std::system((command + " > " + shell_quote(log.string()) + " 2>&1").c_str());
    if (rc == 0) return;
    std::ifstream in(log);
    std::stringstream output;
    output << in.rdbuf();
    user_error() << "--bundle: " << what << " failed (status " << rc << "): " << command
                 << (output.str().empty() ? "" : "\n") << output.str();
}

// "aarch64-linux-gnu-" for "aarch64-linux-gnu-gcc": where the compiler's binutils are.
std::string tool_prefix(const std::string& cc) {
    std::string name = fs::path(cc).filename().string();
    for (const char* suffix : {"gcc", "g++", "clang++", "clang", "cc", "c++"}) {
        std::string s = suffix;
        if (name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
            std::string dir = fs::path(cc).parent_path().string();
            std::string prefix = name.substr(0, name.size() - s.size());
            return dir.empty() ? prefix : dir + "/" + prefix;
        }
    }
    return "";
}

// A C string literal of `s` (function names are identifiers, but quote them properly anyway).
std::string c_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (std::isprint(c)) {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        }
    }
    return out + "\"";
}

// The descriptor: runtime.h's AnvilBundle, spelled out here so that the descriptor compiles
// without Anvil's headers; the runtime checks version and size when it reads it.
std::string descriptor_source(const std::vector<std::string>& functions, const std::string& symbol,
                              uint64_t plan_size, uint64_t params_size) {
    std::ostringstream c;
    c << "/* The descriptor of a bundled model: written by anvil compile --bundle. */\n"
         "#include <stdint.h>\n"
         "typedef int (*anvil_packed)(const void*, const int*, int, void*, int*, void*);\n"
         "typedef struct { const char* name; anvil_packed function; } anvil_function;\n"
         "typedef struct {\n"
         "    uint32_t version, size;\n"
         "    const anvil_function* functions;\n"
         "    uint64_t num_functions;\n"
         "    const char* plan_json;\n"
         "    uint64_t plan_size;\n"
         "    const void* params;\n"
         "    uint64_t params_size;\n"
         "    void (*release_packed_functions)(void);\n"
         "} anvil_bundle;\n"
         "extern const char plan[] __asm__(\"" ANVIL_GRAPH_PLAN_SYMBOL
         "\");\n"
         "extern const char params[] __asm__(\"" ANVIL_GRAPH_PARAMS_SYMBOL
         "\");\n"
         "extern void release(void) __asm__(\"" ANVIL_MODULE_RELEASE_SYMBOL
         "\") __attribute__((weak));\n";
    for (size_t i = 0; i < functions.size(); ++i) {
        c << "extern int f" << i << "(const void*, const int*, int, void*, int*, void*) __asm__("
          << c_string(functions[i]) << ");\n";
    }
    c << "static const anvil_function functions[] = {\n";
    for (size_t i = 0; i < functions.size(); ++i) {
        c << "    {" << c_string(functions[i]) << ", f" << i << "},\n";
    }
    if (functions.empty()) c << "    {0, 0},\n";
    c << "};\n"
      << "const anvil_bundle " << symbol << " = {" << ANVIL_BUNDLE_VERSION
      << ", sizeof(anvil_bundle), functions, " << functions.size() << ", plan, " << plan_size
      << "u, params, " << params_size << "u, release};\n";
    return c.str();
}

}  // namespace

std::string bundle_symbol(const std::string& path) {
    std::string stem = fs::path(path).stem().string();
    std::string name;
    for (unsigned char c : stem) name += std::isalnum(c) ? static_cast<char>(c) : '_';
    if (name.empty()) name = "model";
    return "anvil_bundle_" + name;
}

std::string default_runtime_archive() {
    if (const char* env = std::getenv("ANVIL_RUNTIME_STATIC"); env != nullptr && *env != '\0') {
        if (!fs::exists(env)) user_error() << "ANVIL_RUNTIME_STATIC names no file: '" << env << "'";
        return env;
    }
    std::vector<fs::path> places;
#ifdef ANVIL_RUNTIME_STATIC_BUILD_PATH
    places.emplace_back(ANVIL_RUNTIME_STATIC_BUILD_PATH);
#endif
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        places.push_back(exe.parent_path().parent_path() / "lib" / "libanvil_runtime_static.a");
    for (const fs::path& p : places) {
        if (fs::exists(p, ec)) return p.string();
    }
    std::string looked;
    for (const fs::path& p : places) looked += " " + p.string();
    user_error() << "--bundle: the static runtime (libanvil_runtime_static.a) is not at" << looked
                 << "; set ANVIL_RUNTIME_STATIC or give --bundle-runtime";
    return {};
}

std::string export_bundle(const runtime::Module& kernels, const std::string& path,
                          uint64_t plan_size, uint64_t params_size, const BundleOptions& options) {
    Target target = codegen::module_target(kernels);
    std::string cc = options.cc;
    if (cc.empty()) {
        if (target.is_host()) {
            cc = "cc";
        } else if (target.mtriple.rfind("aarch64", 0) == 0) {
            cc = "aarch64-linux-gnu-gcc";
        } else {
            user_error() << "--bundle: no default compiler for '" << target.str()
                         << "'; give --cross-compiler";
        }
    }
    std::string archive = options.runtime_archive;
    if (archive.empty()) {
        if (!target.is_host()) {
            user_error() << "--bundle for '" << target.str()
                         << "' needs the runtime built for that target: give --bundle-runtime "
                            "(e.g. build-aarch64/src/runtime/libanvil_runtime_static.a, from "
                            "cmake/aarch64-linux-gnu.cmake)";
        }
        archive = default_runtime_archive();
    } else if (!fs::exists(archive)) {
        user_error() << "--bundle-runtime: no file '" << archive << "'";
    }
    std::string symbol = bundle_symbol(path);
    fs::path dir = fs::path(path).string() + ".bundle-" + std::to_string(getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    struct Cleanup {
        fs::path dir;
        ~Cleanup() {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } cleanup{dir};

    codegen::emit_object(kernels, (dir / "kernels.o").string());
    if (!codegen::emit_blob_object(kernels, (dir / "blobs.o").string())) {
        user_error() << "--bundle: the module has no plan or parameters to bundle";
    }
    std::ofstream(dir / "descriptor.c")
        << descriptor_source(kernels.function_names(), symbol, plan_size, params_size);
    std::string q_cc =
        shell_quote(cc) + (options.cc_options.empty() ? "" : " " + options.cc_options);
    fs::path log = dir / "log";
    run_tool(q_cc + " -c -O2 -fPIC -o " + shell_quote((dir / "descriptor.o").string()) + " " +
                 shell_quote((dir / "descriptor.c").string()),
             "compiling the descriptor", log);
    fs::path model = dir / (symbol + ".o");
    run_tool(q_cc + " -r -nostdlib -o " + shell_quote(model.string()) + " " +
                 shell_quote((dir / "kernels.o").string()) + " " +
                 shell_quote((dir / "blobs.o").string()) + " " +
                 shell_quote((dir / "descriptor.o").string()),
             "linking the model's objects", log);
    std::string prefix = tool_prefix(cc);
    run_tool(shell_quote(prefix + "objcopy") + " --keep-global-symbol=" + symbol + " " +
                 shell_quote(model.string()),
             "making the kernels local (objcopy)", log);
    std::error_code ec;
    fs::remove(path, ec);
    // An MRI script: the runtime's objects and the model's in one archive.
    std::ofstream(dir / "archive.mri")
        << "create " << fs::absolute(path).string() << "\naddlib " << fs::absolute(archive).string()
        << "\naddmod " << model.string() << "\nsave\nend\n";
    run_tool(shell_quote(prefix + "ar") + " -M < " + shell_quote((dir / "archive.mri").string()),
             "writing the archive (ar)", log);
    return symbol;
}

}  // namespace anvil::driver
