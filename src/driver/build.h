// Building tensor-expression schedules into callable code: lower (schedule → loop IR → passes)
// and build (… → LLVM → a runtime module).
//
//   auto f = driver::build(s, {A, B, C}, "llvm -mcpu=native", "matmul");
//   f.get_function("matmul")(a, b, c);
#pragma once

#include <string>
#include <vector>

#include "codegen/target.h"
#include "driver/pipeline.h"
#include "runtime/module.h"
#include "te/schedule.h"

namespace anvil::driver {

// The loop IR after the whole pipeline, for a target.
Ref<tir::PrimFunc> lower(const te::Schedule& s, const std::vector<te::Tensor>& args,
                         const std::string& name, const Target& target,
                         const PipelineOptions& options = {});

// Compiles to a module holding one function `name`. The default target is the host CPU
// ("llvm -mcpu=native").
runtime::Module build(const te::Schedule& s, const std::vector<te::Tensor>& args,
                      const std::string& target = "llvm -mcpu=native",
                      const std::string& name = "main", const PipelineOptions& options = {});

}  // namespace anvil::driver
