#include "codegen/target.h"

#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "support/error.h"

namespace anvil {
namespace {

using codegen_test::error_of;

TEST(Target, HostDefaultsToNative) {
    Target t = Target::parse("llvm");
    EXPECT_EQ(t.kind, "llvm");
    EXPECT_FALSE(t.mtriple.empty());
    EXPECT_NE(t.mcpu, "native");
    EXPECT_FALSE(t.mcpu.empty());
    EXPECT_TRUE(t.is_host());
    EXPECT_EQ(t, Target::host());
    EXPECT_EQ(Target::parse("llvm -mcpu=native"), t);
    // The canonical string round-trips.
    EXPECT_EQ(Target::parse(t.str()), t);
}

TEST(Target, NamedX86Cpus) {
    Target spr = Target::parse("llvm -mcpu=sapphirerapids");
    EXPECT_EQ(spr.mcpu, "sapphirerapids");
    EXPECT_EQ(spr.vector_bits(), 512);
    EXPECT_TRUE(spr.has_feature("avx512f"));
    EXPECT_EQ(Target::parse("llvm -mcpu=haswell").vector_bits(), 256);
    EXPECT_EQ(Target::parse("llvm -mcpu=x86-64").vector_bits(), 128);
    EXPECT_EQ(Target::parse("llvm -mcpu=x86-64 -mattr=+avx2,+fma").vector_bits(), 256);
    EXPECT_EQ(Target::parse("llvm -mcpu=skylake-avx512 -mattr=-avx512f").vector_bits(), 256);
    Target t = Target::parse("llvm -mcpu=x86-64 -mattr=+avx2,+fma");
    EXPECT_EQ(t.mattrs, (std::vector<std::string>{"+avx2", "+fma"}));
    EXPECT_EQ(Target::parse(t.str()), t);
    EXPECT_EQ(t.str(), "llvm -mtriple=" + t.mtriple + " -mcpu=x86-64 -mattr=+avx2,+fma");
}

TEST(Target, AArch64) {
    Target t = Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
    EXPECT_EQ(t.mcpu, "generic");
    EXPECT_NE(t.mtriple.find("aarch64"), std::string::npos);
    EXPECT_FALSE(t.is_host());
    EXPECT_EQ(t.vector_bits(), 128);
    EXPECT_EQ(Target::parse(t.str()), t);
    EXPECT_EQ(Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1").mcpu,
              "neoverse-v1");
}

TEST(Target, OtherKinds) {
    EXPECT_EQ(Target::parse("c").kind, "c");
    Target cuda = Target::parse("cuda -arch=sm_80");
    EXPECT_EQ(cuda.mcpu, "sm_80");
    EXPECT_EQ(cuda.str(), "cuda -arch=sm_80");
    EXPECT_TRUE(make_lower_context(cuda).is_gpu);
    EXPECT_FALSE(cuda.is_host());
}

TEST(Target, LowerContext) {
    tir::LowerContext ctx = make_lower_context(Target::parse("llvm -mcpu=skylake-avx512"));
    EXPECT_EQ(ctx.vector_bits, 512);
    EXPECT_FALSE(ctx.is_gpu);
    EXPECT_EQ(make_lower_context(Target::parse("llvm -mtriple=aarch64-linux-gnu")).vector_bits,
              128);
}

TEST(Target, BadStrings) {
    std::string e = error_of([] { Target::parse("tpu"); });
    EXPECT_NE(e.find("unknown kind 'tpu'"), std::string::npos) << e;
    EXPECT_NE(e.find("llvm, c, cuda"), std::string::npos) << e;

    e = error_of([] { Target::parse(""); });
    EXPECT_NE(e.find("empty target"), std::string::npos) << e;

    e = error_of([] { Target::parse("llvm -mfoo=bar"); });
    EXPECT_NE(e.find("unknown option '-mfoo'"), std::string::npos) << e;
    EXPECT_NE(e.find("-mtriple=, -mcpu=, -mattr="), std::string::npos) << e;

    e = error_of([] { Target::parse("llvm mcpu"); });
    EXPECT_NE(e.find("malformed option 'mcpu'"), std::string::npos) << e;
    e = error_of([] { Target::parse("llvm -mcpu="); });
    EXPECT_NE(e.find("malformed option '-mcpu='"), std::string::npos) << e;

    e = error_of([] { Target::parse("llvm -mcpu=pentium9000"); });
    EXPECT_NE(e.find("unknown -mcpu 'pentium9000'"), std::string::npos) << e;
    EXPECT_NE(e.find("skylake"), std::string::npos) << e;  // lists what is accepted

    // An AArch64 CPU is not an x86 CPU.
    e = error_of([] { Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=cortex-a72"); });
    EXPECT_NE(e.find("unknown -mcpu 'cortex-a72'"), std::string::npos) << e;

    e = error_of([] { Target::parse("llvm -mattr=+avx9000"); });
    EXPECT_NE(e.find("unknown -mattr feature 'avx9000'"), std::string::npos) << e;
    EXPECT_NE(e.find("avx2"), std::string::npos) << e;

    e = error_of([] { Target::parse("llvm -mattr=avx2"); });
    EXPECT_NE(e.find("must start with '+' or '-'"), std::string::npos) << e;

    e = error_of([] { Target::parse("llvm -mtriple=z80-unknown-none"); });
    EXPECT_NE(e.find("unknown -mtriple"), std::string::npos) << e;

    e = error_of([] { Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=native"); });
    EXPECT_NE(e.find("-mcpu=native"), std::string::npos) << e;

    e = error_of([] { Target::parse("llvm -mcpu=haswell -mcpu=skylake"); });
    EXPECT_NE(e.find("given twice"), std::string::npos) << e;

    e = error_of([] { Target::parse("cuda -mattr=+ptx80"); });
    EXPECT_NE(e.find("unknown option '-mattr'"), std::string::npos) << e;
}

TEST(Target, CompositeTargetsNameExternalCodeGeneratorsFirst) {
    Target t = Target::parse("dnnl, llvm -mcpu=skylake-avx512 -mattr=+avx2,+fma");
    EXPECT_EQ(t.external_compilers, std::vector<std::string>{"dnnl"});
    EXPECT_EQ(t.kind, "llvm");
    EXPECT_EQ(t.mcpu, "skylake-avx512");
    EXPECT_EQ(t.mattrs, (std::vector<std::string>{"+avx2", "+fma"}));
    EXPECT_EQ(t.str().rfind("dnnl, llvm ", 0), 0u) << t.str();
    EXPECT_EQ(Target::parse(t.str()), t);
    EXPECT_TRUE(t.without_externals().external_compilers.empty());
    EXPECT_EQ(t.without_externals().mcpu, t.mcpu);
    // A feature list's commas are not target separators.
    EXPECT_TRUE(Target::parse("llvm -mattr=+avx2,+fma").external_compilers.empty());
    for (const char* stray : {"dnnl,, llvm", "dnnl, llvm,", ", llvm"}) {
        std::string e = error_of([&] { Target::parse(stray); });
        EXPECT_NE(e.find("an empty part (a stray comma)"), std::string::npos) << stray << ": " << e;
    }
    // A feature without its sign is the feature list's error, not a code generator's.
    std::string e = error_of([] { Target::parse("llvm -mattr=+avx2,fma"); });
    EXPECT_EQ(e.find("external code generator"), std::string::npos) << e;
}

}  // namespace
}  // namespace anvil
