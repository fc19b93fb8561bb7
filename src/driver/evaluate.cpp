#include "driver/evaluate.h"

#include <unordered_map>

#include "driver/vm_compiler.h"
#include "graph/expr_functor.h"
#include "ops/call_tir.h"
#include "runtime/vm.h"
#include "support/error.h"

namespace anvil::driver {

using graph::Expr;

std::vector<runtime::NDArray> evaluate_lowered(const graph::IRModule& m,
                                               const runtime::Module& kernels,
                                               const std::vector<runtime::NDArray>& inputs) {
    const auto& main = m.main();
    if (inputs.size() != main->params.size()) {
        user_error() << "main takes " << main->params.size() << " input(s), got " << inputs.size();
    }
    std::unordered_map<const graph::ExprNode*, std::vector<runtime::NDArray>> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto& want =
            graph::expect_tensor(main->params[i]->type, {}, "input " + main->params[i]->name);
        auto shape = inputs[i].shape();
        if (std::vector<int64_t>(shape.begin(), shape.end()) != want.static_shape() ||
            graph::dtype_of(inputs[i].dtype()) != want.dtype) {
            user_error() << "input '" << main->params[i]->name << "' is " << inputs[i].str()
                         << ", expected " << graph::type_str(main->params[i]->type);
        }
        values[main->params[i].get()] = {inputs[i]};
    }
    graph::post_order_visit(main->body, [&](const Expr& e) {
        if (values.count(e.get())) return;
        if (auto* c = e.as<graph::Constant>()) {
            values[c] = {c->data};
        } else if (auto* call = e.as<graph::Call>()) {
            if (!call->op.defined() || call->op->name != "call_tir") {
                user_error(e->loc) << "evaluate_lowered: main still calls "
                                   << (call->op.defined() ? call->op->name : "a function")
                                   << "; lower the module first";
            }
            const auto& attrs = static_cast<const ops::CallTirAttrs&>(*call->attrs);
            std::vector<runtime::NDArray> outs;
            for (const auto& t : ops::call_tir_outputs(attrs)) {
                const auto& tt = *t.as<graph::TensorType>();
                outs.push_back(
                    runtime::NDArray::empty(tt.static_shape(), graph::dl_dtype_of(tt.dtype)));
            }
            std::vector<AnvilValue> args;
            for (const auto& a : call->args) {
                for (const auto& v : values.at(a.get()))
                    args.push_back(AnvilValue{.v_handle = v.tensor()});
            }
            for (const auto& o : outs) args.push_back(AnvilValue{.v_handle = o.tensor()});
            std::vector<int> codes(args.size(), kAnvilDLTensor);
            runtime::PackedFunc f = kernels.get_function(attrs.kernel);
            if (!f.defined()) user_error() << "no compiled kernel '" << attrs.kernel << "'";
            f.call(args.data(), codes.data(), static_cast<int>(args.size()));
            values[call] = outs;
        } else if (auto* tuple = e.as<graph::Tuple>()) {
            std::vector<runtime::NDArray> all;
            for (const auto& f : tuple->fields) {
                const auto& v = values.at(f.get());
                all.insert(all.end(), v.begin(), v.end());
            }
            values[tuple] = all;
        } else if (auto* item = e.as<graph::TupleGetItem>()) {
            values[item] = {values.at(item->tuple.get()).at(item->index)};
        } else if (!e.is<graph::Var>()) {
            user_error(e->loc) << "evaluate_lowered: cannot run a "
                               << graph::expr_kind_name(e->kind);
        }
    });
    return values.at(main->body.get());
}

namespace {

runtime::VirtualMachine vm_of(const graph::IRModule& m, const runtime::Module& kernels) {
    VMExecutable exe = compile_vm(m);
    std::span<const std::byte> params(reinterpret_cast<const std::byte*>(exe.params.data()),
                                      exe.params.size());
    return runtime::VirtualMachine(std::move(exe.program), params, kernels);
}

}  // namespace

std::vector<runtime::NDArray> run_in_process(const graph::IRModule& m,
                                             const runtime::Module& kernels,
                                             const std::vector<runtime::NDArray>& inputs) {
    if (!needs_vm(m)) return evaluate_lowered(m, kernels, inputs);
    return vm_of(m, kernels).run(inputs);
}

runtime::VMValue run_values_in_process(const graph::IRModule& m, const runtime::Module& kernels,
                                       std::vector<runtime::VMValue> inputs) {
    return vm_of(m, kernels).invoke("main", std::move(inputs));
}

}  // namespace anvil::driver
