// The LLVM module: building, optimization, the JIT, assembly/object output and shared libraries.
#include "codegen/llvm/llvm_module.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "codegen/llvm/codegen_llvm.h"
#include "support/error.h"
#include "support/shell_quote.h"

namespace anvil::codegen {

namespace {

constexpr const char* kTypeKey = "llvm";

std::string llvm_cpu(const Target& t) {
    return t.mcpu == "generic" ? "" : t.mcpu;
}

std::string error_text(llvm::Error err) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << err;
    return os.str();
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const Target& target) {
    initialize_llvm_targets();
    std::string err;
    const llvm::Target* backend = llvm::TargetRegistry::lookupTarget(target.mtriple, err);
    if (!backend) user_error() << "target '" << target.str() << "': " << err;
    llvm::TargetOptions options;  // strict IEEE; contraction is allowed per instruction
    // Position-independent code, so one object serves both shared libraries and the JIT.
    return std::unique_ptr<llvm::TargetMachine>(backend->createTargetMachine(
        target.mtriple, llvm_cpu(target), target.feature_string(), options, llvm::Reloc::PIC_,
        std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

void optimize(llvm::Module& m, llvm::TargetMachine* tm) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    tuning.LoopUnrolling = true;
    // The target machine gives the vectorizer and unroller the real costs (TTI).
    llvm::PassBuilder pb(tm, tuning);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
}

class LLVMModuleNode : public runtime::ModuleNode {
public:
    LLVMModuleNode(Target target, std::vector<std::string> names)
        : target_(std::move(target)),
          names_(std::move(names)),
          context_(std::make_unique<llvm::LLVMContext>()) {}
    // The JIT goes first: it holds code compiled from the module and its context. Before it, the
    // kernels give back the registry functions they cached (no kernel runs now: each function
    // taken from this module holds a reference to it).
    ~LLVMModuleNode() override {
        if (jit_ && has_packed_release_) {
            auto release = jit_->lookup(ANVIL_MODULE_RELEASE_SYMBOL);
            if (release) {
                release->toPtr<void (*)()>()();
            } else {
                llvm::consumeError(release.takeError());  // compiled with the kernels: not reached
            }
        }
        jit_.reset();
        module_.reset();
    }

    void build(const std::vector<Ref<tir::PrimFunc>>& funcs) {
        tm_ = make_target_machine(target_);
        auto* ctx = context_.getContext();
        module_ = std::make_unique<llvm::Module>("anvil", *ctx);
        module_->setTargetTriple(target_.mtriple);
        module_->setDataLayout(tm_->createDataLayout());
        CodeGenLLVM cg(module_.get(), target_);
        for (const auto& f : funcs) cg.add_function(*f);
        cg.add_function_names(names_);
        has_packed_release_ = cg.add_packed_release();
        // The CPU and features on every function, so per-function TTI queries see them too.
        for (llvm::Function& fn : *module_) {
            if (fn.isDeclaration()) continue;
            fn.addFnAttr("target-cpu", llvm_cpu(target_).empty() ? "generic" : llvm_cpu(target_));
            if (!target_.mattrs.empty()) fn.addFnAttr("target-features", target_.feature_string());
        }
        std::string problems;
        llvm::raw_string_ostream os(problems);
        if (llvm::verifyModule(*module_, &os)) {
            internal_error() << "codegen produced invalid LLVM IR: " << os.str();
        }
        optimize(*module_, tm_.get());
    }

    runtime::PackedFunc get_function(const std::string& name) override {
        std::lock_guard<std::mutex> lock(mutex_);
        auto known = std::find(names_.begin(), names_.end(), name);
        if (known == names_.end()) return runtime::PackedFunc();
        if (!target_.is_host()) {
            user_error() << "function '" << name << "' was compiled for '" << target_.str()
                         << "', which cannot run in this process; use emit_object or "
                            "export_library and run it on that machine";
        }
        if (!jit_) start_jit();
        return make_function(addresses_.at(name));
    }
    std::vector<std::string> function_names() const override { return names_; }
    std::string type_key() const override { return kTypeKey; }

    std::string source(const std::string& format) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string out;
        llvm::raw_string_ostream os(out);
        if (format == "ll") {
            module_->print(os, nullptr);
        } else if (format == "asm") {
            llvm::SmallString<0> buffer;
            llvm::raw_svector_ostream vos(buffer);
            emit(vos, llvm::CodeGenFileType::AssemblyFile);
            os << buffer;
        } else {
            user_error() << "get_source: unknown format '" << format << "'; accepted: ll, asm";
        }
        return os.str();
    }

    void write_object(const std::string& path) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::error_code ec;
        llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
        if (ec) user_error() << "cannot write object '" << path << "': " << ec.message();
        emit(out, llvm::CodeGenFileType::ObjectFile);
        out.close();
        if (out.has_error()) user_error() << "cannot write object '" << path << "'";
    }

    const Target& target() const { return target_; }

    void add_blob(const std::string& symbol, std::string bytes) {
        std::lock_guard<std::mutex> lock(mutex_);
        bytes.push_back('\0');
        blobs_[symbol] = std::move(bytes);
    }
    bool has_blobs() const { return !blobs_.empty(); }
    const std::vector<std::string>& names() const { return names_; }

    // The blobs as their own object file: a second, data-only LLVM module for the same target, so
    // the kernels' module is neither changed nor copied with megabytes of params in it.
    void write_blob_object(const std::string& path) {
        std::lock_guard<std::mutex> lock(mutex_);
        llvm::LLVMContext ctx;
        llvm::Module data("anvil_blobs", ctx);
        data.setTargetTriple(target_.mtriple);
        data.setDataLayout(tm_->createDataLayout());
        for (const auto& [symbol, bytes] : blobs_) {
            auto* init =
                llvm::ConstantDataArray::getRaw(llvm::StringRef(bytes.data(), bytes.size()),
                                                bytes.size(), llvm::Type::getInt8Ty(ctx));
            auto* blob = new llvm::GlobalVariable(data, init->getType(), /*isConstant=*/true,
                                                  llvm::GlobalValue::ExternalLinkage, init, symbol);
            blob->setAlignment(llvm::Align(ANVIL_TENSOR_ALIGNMENT));
            auto* i64 = llvm::Type::getInt64Ty(ctx);
            auto* size = new llvm::GlobalVariable(
                data, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                llvm::ConstantInt::get(i64, bytes.size() - 1), symbol + ANVIL_BLOB_SIZE_SUFFIX);
            size->setAlignment(llvm::Align(8));
        }
        std::error_code ec;
        llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
        if (ec) user_error() << "cannot write object '" << path << "': " << ec.message();
        llvm::legacy::PassManager pm;
        if (tm_->addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile)) {
            internal_error() << "LLVM cannot emit an object file for " << target_.str();
        }
        pm.run(data);
        out.close();
        if (out.has_error()) user_error() << "cannot write object '" << path << "'";
    }

private:
    // Code generation passes change the IR they run on, so they get a copy.
    void emit(llvm::raw_pwrite_stream& out, llvm::CodeGenFileType type) {
        std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*module_);
        llvm::legacy::PassManager pm;
        if (tm_->addPassesToEmitFile(pm, out, nullptr, type)) {
            internal_error() << "LLVM cannot emit this file type for " << target_.str();
        }
        pm.run(*copy);
    }

    void start_jit() {
        auto jtmb = llvm::orc::JITTargetMachineBuilder(llvm::Triple(target_.mtriple));
        jtmb.setCPU(llvm_cpu(target_));
        jtmb.addFeatures(target_.mattrs);
        jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
        jtmb.setRelocationModel(llvm::Reloc::PIC_);
        auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
        if (!jit) user_error() << "cannot start the LLVM JIT: " << error_text(jit.takeError());
        // The runtime's C API, snprintf and libm come from this process.
        auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
            (*jit)->getDataLayout().getGlobalPrefix());
        if (!generator) {
            user_error() << "cannot search this process for symbols: "
                         << error_text(generator.takeError());
        }
        (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
        llvm::orc::ThreadSafeModule tsm(llvm::CloneModule(*module_), context_);
        if (auto err = (*jit)->addIRModule(std::move(tsm))) {
            user_error() << "cannot add the module to the JIT: " << error_text(std::move(err));
        }
        // Compile everything now, so calls never wait on the JIT or race on the context.
        std::unordered_map<std::string, AnvilPackedCFunc> addresses;
        for (const auto& name : names_) {
            auto addr = (*jit)->lookup(name);
            if (!addr) {
                user_error() << "JIT compilation of '" << name
                             << "' failed: " << error_text(addr.takeError());
            }
            addresses[name] = addr->toPtr<AnvilPackedCFunc>();
        }
        jit_ = std::move(*jit);
        addresses_ = std::move(addresses);
    }

    Target target_;
    std::vector<std::string> names_;
    llvm::orc::ThreadSafeContext context_;
    std::unique_ptr<llvm::TargetMachine> tm_;
    std::unique_ptr<llvm::Module> module_;  // optimized
    std::unique_ptr<llvm::orc::LLJIT> jit_;
    bool has_packed_release_ = false;  // the module defines ANVIL_MODULE_RELEASE_SYMBOL
    std::unordered_map<std::string, AnvilPackedCFunc> addresses_;
    std::map<std::string, std::string> blobs_;  // symbol -> bytes plus a NUL
    std::mutex mutex_;
};

LLVMModuleNode* as_llvm(const runtime::Module& m, const char* what) {
    if (!m.defined() || m.type_key() != kTypeKey) {
        user_error() << what << ": the module was not built by build_llvm (type '"
                     << (m.defined() ? m.type_key() : "null") << "')";
    }
    return static_cast<LLVMModuleNode*>(m.node());
}

bool valid_symbol_name(const std::string& name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    for (char c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
    return name.rfind("__anvil", 0) != 0 && name.rfind("anvil_", 0) != 0;
}

}  // namespace

runtime::Module build_llvm(const std::vector<Ref<tir::PrimFunc>>& funcs, const Target& target) {
    if (target.kind != "llvm") {
        user_error() << "build_llvm: target '" << target.str()
                     << "' is not an LLVM CPU target; use a target string starting with 'llvm'";
    }
    // No functions is fine: a model whose outputs are inputs or constants has no kernels.
    std::vector<std::string> names;
    std::unordered_set<std::string> seen;
    for (const auto& f : funcs) {
        if (!valid_symbol_name(f->name)) {
            user_error() << "build_llvm: function name '" << f->name
                         << "' is not usable as a symbol; use letters, digits and '_', not "
                            "starting with a digit, 'anvil_' or '__anvil'";
        }
        if (!seen.insert(f->name).second) {
            user_error() << "build_llvm: two functions are named '" << f->name << "'";
        }
        names.push_back(f->name);
    }
    auto node = make_ref<LLVMModuleNode>(target, names);
    const_cast<LLVMModuleNode*>(node.get())->build(funcs);
    return runtime::Module(node);
}

std::string get_source(const runtime::Module& m, const std::string& format) {
    return as_llvm(m, "get_source")->source(format);
}

void emit_object(const runtime::Module& m, const std::string& path) {
    as_llvm(m, "emit_object")->write_object(path);
}

bool emit_blob_object(const runtime::Module& m, const std::string& path) {
    LLVMModuleNode* node = as_llvm(m, "emit_blob_object");
    if (!node->has_blobs()) return false;
    node->write_blob_object(path);
    return true;
}

Target module_target(const runtime::Module& m) {
    return as_llvm(m, "module_target")->target();
}

void export_library(const runtime::Module& m, const std::string& path, const std::string& cc,
                    const std::string& cc_options) {
    LLVMModuleNode* node = as_llvm(m, "export_library");
    std::string compiler = cc;
    if (compiler.empty()) {
        llvm::Triple triple(node->target().mtriple);
        if (node->target().is_host()) {
            compiler = "cc";
        } else if (triple.isAArch64()) {
            compiler = "aarch64-linux-gnu-gcc";
        } else {
            user_error() << "export_library: no default linker for '" << node->target().str()
                         << "'; pass the cross compiler to use";
        }
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path object = fs::path(path).string() + ".o";
    fs::path blob_object = fs::path(path).string() + ".blobs.o";
    node->write_object(object.string());
    std::string objects = shell_quote(object.string());
    if (node->has_blobs()) {
        node->write_blob_object(blob_object.string());
        objects += " " + shell_quote(blob_object.string());
    }
    fs::path log = fs::path(path).string() + ".link.log";
    std::string command = shell_quote(compiler) + " -shared -o " + shell_quote(path) + " " +
                          objects + " -lm " + cc_options + " > " + shell_quote(log.string()) +
                          " 2>&1";
    int rc = std::system(command.c_str());
    std::string output;
    if (FILE* f = std::fopen(log.c_str(), "r")) {
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) output.append(buf, n);
        std::fclose(f);
    }
    fs::remove(object, ec);
    fs::remove(blob_object, ec);
    fs::remove(log, ec);
    if (rc != 0) {
        user_error() << "export_library: linking '" << path << "' with '" << compiler
                     << (cc_options.empty() ? "" : " " + cc_options) << "' failed (status " << rc
                     << ")" << (output.empty() ? "" : ":\n") << output;
    }
}

void add_blob(const runtime::Module& m, const std::string& symbol, std::string bytes) {
    LLVMModuleNode* node = as_llvm(m, "add_blob");
    bool identifier = !symbol.empty() && !std::isdigit(static_cast<unsigned char>(symbol[0]));
    for (char c : symbol) {
        identifier = identifier && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    }
    if (!identifier) {
        user_error() << "add_blob: '" << symbol
                     << "' is not usable as a symbol; use letters, digits and '_', not starting "
                        "with a digit";
    }
    for (const std::string& fn : node->names()) {
        if (fn == symbol || fn == symbol + ANVIL_BLOB_SIZE_SUFFIX) {
            user_error() << "add_blob: '" << symbol << "' clashes with the module's function '"
                         << fn << "'";
        }
    }
    if (symbol == ANVIL_MODULE_FUNCTION_LIST_SYMBOL ||
        symbol + ANVIL_BLOB_SIZE_SUFFIX == ANVIL_MODULE_FUNCTION_LIST_SYMBOL) {
        user_error() << "add_blob: '" << symbol << "' is reserved for the module's function list";
    }
    node->add_blob(symbol, std::move(bytes));
}

}  // namespace anvil::codegen
