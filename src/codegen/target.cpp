#include "codegen/target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "support/error.h"

// Declared by hand rather than through llvm/Config/Targets.def so that only the back ends we
// ship get linked in and initialized (libLLVM exports all of them).
extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeX86TargetMC();
void LLVMInitializeX86AsmPrinter();
void LLVMInitializeX86AsmParser();
void LLVMInitializeAArch64TargetInfo();
void LLVMInitializeAArch64Target();
void LLVMInitializeAArch64TargetMC();
void LLVMInitializeAArch64AsmPrinter();
void LLVMInitializeAArch64AsmParser();
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace anvil {

void initialize_llvm_targets() {
    static std::once_flag once;
    std::call_once(once, [] {
        LLVMInitializeX86TargetInfo();
        LLVMInitializeX86Target();
        LLVMInitializeX86TargetMC();
        LLVMInitializeX86AsmPrinter();
        LLVMInitializeX86AsmParser();
        LLVMInitializeAArch64TargetInfo();
        LLVMInitializeAArch64Target();
        LLVMInitializeAArch64TargetMC();
        LLVMInitializeAArch64AsmPrinter();
        LLVMInitializeAArch64AsmParser();
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
    });
}

namespace {

constexpr const char* kDefaultCudaArch = "sm_70";

std::string join(const std::vector<std::string>& items, const char* sep) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += sep;
        out += items[i];
    }
    return out;
}

// The LLVM back end for a triple, or a UserError listing the architectures we ship.
const llvm::Target* lookup_backend(const std::string& triple, const std::string& text) {
    initialize_llvm_targets();
    std::string err;
    const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
    if (!t) {
        user_error() << "target '" << text << "': unknown -mtriple '" << triple
                     << "'; accepted architectures: x86_64, aarch64, nvptx64 (e.g. "
                        "-mtriple=aarch64-linux-gnu)";
    }
    return t;
}

std::unique_ptr<llvm::MCSubtargetInfo> make_subtarget(const std::string& triple,
                                                      const std::string& cpu,
                                                      const std::string& features) {
    initialize_llvm_targets();
    std::string err;
    const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
    ANVIL_CHECK(t) << "no LLVM back end for " << triple << ": " << err;
    return std::unique_ptr<llvm::MCSubtargetInfo>(
        t->createMCSubtargetInfo(triple, cpu == "generic" ? "" : cpu, features));
}

// "native" on the host: the host CPU's name, plus the features where the host differs from
// what LLVM assumes for that CPU (a VM may hide AVX-512 from a CPU that has it, for example).
void resolve_native(Target* t) {
    t->mcpu = llvm::sys::getHostCPUName().str();
    if (t->mcpu.empty()) t->mcpu = "generic";
    auto sti = make_subtarget(t->mtriple, t->mcpu, "");
    std::vector<std::string> diffs;
    for (const auto& entry : llvm::sys::getHostCPUFeatures()) {
        std::string name = entry.getKey().str();
        // Only features this back end knows: the host query reports a few that it does not.
        bool known = false;
        for (const auto& kv : sti->getAllProcessorFeatures()) {
            if (name == kv.Key) {
                known = true;
                break;
            }
        }
        if (!known) continue;
        bool on_by_cpu = sti->checkFeatures("+" + name);
        if (on_by_cpu != entry.getValue()) diffs.push_back((entry.getValue() ? "+" : "-") + name);
    }
    std::sort(diffs.begin(), diffs.end());
    // Features the user gave explicitly come after, so they win.
    diffs.insert(diffs.end(), t->mattrs.begin(), t->mattrs.end());
    t->mattrs = std::move(diffs);
}

void check_cpu(const Target& t, const std::string& text) {
    if (t.mcpu == "generic") return;
    // Built without the CPU: LLVM prints a warning for unknown CPU names it is given.
    auto sti = make_subtarget(t.mtriple, "generic", "");
    if (sti->isCPUStringValid(t.mcpu)) return;
    std::vector<std::string> names;
    for (const auto& kv : sti->getAllProcessorDescriptions()) names.emplace_back(kv.Key);
    user_error() << "target '" << text << "': unknown -mcpu '" << t.mcpu << "' for triple "
                 << t.mtriple << "; accepted: native, generic, " << join(names, ", ");
}

void check_features(const Target& t, const std::string& text) {
    if (t.mattrs.empty()) return;
    auto sti = make_subtarget(t.mtriple, "generic", "");
    for (const auto& f : t.mattrs) {
        if (f.size() < 2 || (f[0] != '+' && f[0] != '-')) {
            user_error() << "target '" << text << "': -mattr entry '" << f
                         << "' must start with '+' or '-' (e.g. -mattr=+avx2,+fma)";
        }
        std::string name = f.substr(1);
        bool known = false;
        for (const auto& kv : sti->getAllProcessorFeatures()) {
            if (name == kv.Key) {
                known = true;
                break;
            }
        }
        if (!known) {
            std::vector<std::string> names;
            for (const auto& kv : sti->getAllProcessorFeatures()) names.emplace_back(kv.Key);
            user_error() << "target '" << text << "': unknown -mattr feature '" << name
                         << "' for triple " << t.mtriple << "; accepted: " << join(names, ", ");
        }
    }
}

std::vector<std::string> split_commas(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, ',')) {
        if (!cur.empty()) out.push_back(cur);
    }
    return out;
}

}  // namespace

namespace {

// "dnnl, llvm -mattr=+avx2,+fma" -> {"dnnl", "llvm -mattr=+avx2,+fma"}: split at commas, where a
// piece continues the previous one when the previous one ends in an -mattr list (a feature, even
// a misspelt one without its sign, which parse() then names) or the piece starts with '+'/'-'.
std::vector<std::string> split_composite(const std::string& text) {
    std::vector<std::string> parts;
    std::istringstream in(text);
    for (std::string raw; std::getline(in, raw, ',');) {
        size_t b = raw.find_first_not_of(" \t"), e = raw.find_last_not_of(" \t");
        std::string piece = b == std::string::npos ? "" : raw.substr(b, e - b + 1);
        bool in_mattr = false;
        if (!parts.empty()) {
            size_t last = parts.back().find_last_of(" \t");
            std::string token = parts.back().substr(last == std::string::npos ? 0 : last + 1);
            in_mattr = token.rfind("-mattr=", 0) == 0 && piece.find(' ') == std::string::npos;
        }
        if (!parts.empty() && !piece.empty() && (piece[0] == '+' || piece[0] == '-' || in_mattr)) {
            parts.back() += "," + piece;
        } else {
            parts.push_back(piece);
        }
    }
    // A trailing comma leaves no piece for getline: it is a stray comma too.
    if (!text.empty() && text.find_last_not_of(" \t") != std::string::npos &&
        text[text.find_last_not_of(" \t")] == ',') {
        parts.push_back("");
    }
    return parts;
}

bool is_identifier(const std::string& s) {
    if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
    }
    return true;
}

}  // namespace

Target Target::parse(const std::string& text) {
    std::vector<std::string> parts = split_composite(text);
    if (parts.size() > 1) {
        std::vector<std::string> externals;
        for (const auto& part : parts) {
            if (part.empty()) {
                user_error() << "target '" << text
                             << "': an empty part (a stray comma); a "
                                "composite target is written 'dnnl, llvm -mcpu=native'";
            }
        }
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
            if (!is_identifier(parts[i])) {
                user_error() << "target '" << text << "': '" << parts[i]
                             << "' is no external code generator name; a composite target names "
                                "its external code generators first, then one target, e.g. "
                                "'dnnl, llvm -mcpu=native'";
            }
            for (const auto& seen : externals) {
                if (seen == parts[i]) {
                    user_error() << "target '" << text << "': '" << parts[i] << "' given twice";
                }
            }
            externals.push_back(parts[i]);
        }
        Target t = parse(parts.back());
        t.external_compilers = std::move(externals);
        return t;
    }
    std::istringstream in(text);
    std::vector<std::string> tokens;
    for (std::string tok; in >> tok;) tokens.push_back(tok);
    if (tokens.empty()) {
        user_error() << "empty target string; accepted kinds: llvm, c, cuda (e.g. 'llvm "
                        "-mcpu=native')";
    }
    Target t;
    t.kind = tokens[0];
    if (t.kind != "llvm" && t.kind != "c" && t.kind != "cuda") {
        user_error() << "target '" << text << "': unknown kind '" << t.kind
                     << "'; accepted kinds: llvm, c, cuda";
    }
    const bool cuda = t.kind == "cuda";
    const char* accepted = cuda ? "-arch=sm_XX, -mcpu=sm_XX" : "-mtriple=, -mcpu=, -mattr=";
    bool seen_triple = false, seen_cpu = false;
    for (size_t i = 1; i < tokens.size(); ++i) {
        const std::string& tok = tokens[i];
        size_t eq = tok.find('=');
        if (tok.size() < 2 || tok[0] != '-' || eq == std::string::npos || eq + 1 == tok.size()) {
            user_error() << "target '" << text << "': malformed option '" << tok
                         << "'; options are written -name=value; accepted: " << accepted;
        }
        std::string key = tok.substr(0, eq), value = tok.substr(eq + 1);
        if (!cuda && key == "-mtriple") {
            if (seen_triple) user_error() << "target '" << text << "': -mtriple given twice";
            seen_triple = true;
            t.mtriple = value;
        } else if (key == "-mcpu" || (cuda && key == "-arch")) {
            if (seen_cpu) user_error() << "target '" << text << "': " << key << " given twice";
            seen_cpu = true;
            t.mcpu = value;
        } else if (!cuda && key == "-mattr") {
            for (auto& f : split_commas(value)) t.mattrs.push_back(f);
        } else {
            user_error() << "target '" << text << "': unknown option '" << key << "' for kind "
                         << t.kind << "; accepted: " << accepted;
        }
    }

    const std::string host_triple = llvm::Triple::normalize(llvm::sys::getProcessTriple());
    if (cuda) {
        t.mtriple = "nvptx64-nvidia-cuda";
        if (t.mcpu.empty()) t.mcpu = kDefaultCudaArch;
        lookup_backend(t.mtriple, text);
        check_cpu(t, text);
        return t;
    }
    t.mtriple = t.mtriple.empty() ? host_triple : llvm::Triple::normalize(t.mtriple);
    lookup_backend(t.mtriple, text);
    const bool host_arch = llvm::Triple(t.mtriple).getArch() == llvm::Triple(host_triple).getArch();
    if (t.mcpu == "native" && !host_arch) {
        user_error() << "target '" << text << "': -mcpu=native names the host CPU (" << host_triple
                     << ") but the triple is " << t.mtriple
                     << "; give an LLVM CPU name for that architecture or 'generic'";
    }
    check_features(t, text);
    if (t.mcpu == "native" || (t.mcpu.empty() && host_arch)) {
        resolve_native(&t);
    } else if (t.mcpu.empty()) {
        t.mcpu = "generic";
    }
    check_cpu(t, text);
    return t;
}

Target Target::host() {
    // The host does not change while the process runs; parsing asks LLVM about its CPU.
    static const Target host = parse("llvm -mcpu=native");
    return host;
}

std::string Target::feature_string() const {
    return join(mattrs, ",");
}

bool Target::has_feature(const std::string& feature) const {
    if (kind == "cuda") return false;
    auto sti = make_subtarget(mtriple, mcpu, feature_string());
    return sti->checkFeatures("+" + feature);
}

int Target::vector_bits() const {
    if (kind == "cuda") return 32;
    llvm::Triple triple(mtriple);
    if (triple.isX86()) {
        if (has_feature("avx512f")) return 512;
        if (has_feature("avx")) return 256;
        return 128;
    }
    return 128;  // AArch64 NEON (SVE lengths are not known at compile time)
}

bool Target::is_host() const {
    if (kind != "llvm") return false;
    llvm::Triple mine(mtriple), host(llvm::sys::getProcessTriple());
    return mine.getArch() == host.getArch() && mine.getOS() == host.getOS();
}

Target Target::without_externals() const {
    Target t = *this;
    t.external_compilers.clear();
    return t;
}

std::string Target::str() const {
    std::string s;
    for (const auto& e : external_compilers) s += e + ", ";
    s += kind;
    if (kind == "cuda") return s + " -arch=" + mcpu;
    s += " -mtriple=" + mtriple + " -mcpu=" + mcpu;
    if (!mattrs.empty()) s += " -mattr=" + feature_string();
    return s;
}

tir::LowerContext make_lower_context(const Target& target) {
    tir::LowerContext ctx;
    ctx.vector_bits = target.vector_bits();
    ctx.is_gpu = target.kind == "cuda";
    // AMX tiles need the OS's permission, which the runtime asks of Linux (amx_permission.cpp).
    const llvm::Triple triple(target.mtriple);
    if (target.kind == "llvm" && triple.isX86() && triple.isOSLinux()) {
        const bool tiles = target.has_feature("amx-tile");
        ctx.amx_bf16 = tiles && target.has_feature("amx-bf16");
        ctx.amx_int8 = tiles && target.has_feature("amx-int8");
    }
    return ctx;
}

}  // namespace anvil
