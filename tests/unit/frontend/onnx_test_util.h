// Helpers for the ONNX front-end tests: tiny models built in code, and walks over imported
// graphs (op histograms, constant counts).
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "e2e/vm_test_util.h"
#include "errors/expect_message.h"
#include "frontend/onnx/from_onnx.h"
#include "graph/expr.h"

namespace anvil::frontend::testing {

inline std::string models_dir() {
    return "/work/shared/models";
}

inline bool have_model(const std::string& name) {
    return std::filesystem::exists(models_dir() + "/" + name + "/model.onnx");
}

// A fresh empty directory for one test's files.
inline std::filesystem::path temp_dir(const std::string& name) {
    auto dir = std::filesystem::temp_directory_path() /
               ("anvil_frontend_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

// A model of one graph in opset `opset`; add inputs, initializers, nodes and outputs to it.
struct ModelBuilder {
    ::onnx::ModelProto model;
    ::onnx::GraphProto* graph;

    explicit ModelBuilder(int opset = 13) {
        model.set_ir_version(7);
        model.set_producer_name("anvil-test");
        auto* o = model.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        graph = model.mutable_graph();
        graph->set_name("test");
    }

    static void set_type(::onnx::ValueInfoProto* v, int elem_type,
                         const std::vector<int64_t>& shape, const std::vector<std::string>& syms) {
        auto* tt = v->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elem_type);
        auto* s = tt->mutable_shape();
        for (size_t i = 0; i < shape.size(); ++i) {
            auto* d = s->add_dim();
            if (i < syms.size() && !syms[i].empty()) {
                d->set_dim_param(syms[i]);
            } else {
                d->set_dim_value(shape[i]);
            }
        }
    }

    ModelBuilder& input(const std::string& name, const std::vector<int64_t>& shape,
                        int elem_type = ::onnx::TensorProto::FLOAT,
                        const std::vector<std::string>& syms = {}) {
        auto* v = graph->add_input();
        v->set_name(name);
        set_type(v, elem_type, shape, syms);
        return *this;
    }

    ModelBuilder& output(const std::string& name) {
        graph->add_output()->set_name(name);
        return *this;
    }

    ::onnx::TensorProto* float_init(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<float>& values) {
        auto* t = graph->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::FLOAT);
        for (int64_t d : dims) t->add_dims(d);
        for (float v : values) t->add_float_data(v);
        return t;
    }

    ::onnx::TensorProto* int64_init(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& values) {
        auto* t = graph->add_initializer();
        t->set_name(name);
        t->set_data_type(::onnx::TensorProto::INT64);
        for (int64_t d : dims) t->add_dims(d);
        for (int64_t v : values) t->add_int64_data(v);
        return t;
    }

    ::onnx::NodeProto* node(const std::string& op_type, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs, const std::string& name = "") {
        auto* n = graph->add_node();
        n->set_op_type(op_type);
        n->set_name(name);
        for (const auto& i : inputs) n->add_input(i);
        for (const auto& o : outputs) n->add_output(o);
        return n;
    }

    static void attr_int(::onnx::NodeProto* n, const std::string& name, int64_t v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void attr_ints(::onnx::NodeProto* n, const std::string& name,
                          const std::vector<int64_t>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    }
    static void attr_float(::onnx::NodeProto* n, const std::string& name, float v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    static void attr_string(::onnx::NodeProto* n, const std::string& name, const std::string& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::STRING);
        a->set_s(v);
    }

    static void attr_strings(::onnx::NodeProto* n, const std::string& name,
                             const std::vector<std::string>& v) {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::STRINGS);
        for (const auto& x : v) a->add_strings(x);
    }

    graph::IRModule import(const ImportOptions& options = {}) const {
        return from_onnx(model, options, "test.onnx");
    }
};

// Every expression reachable from `root`, once each, operands before users.
inline void visit_graph(const graph::Expr& root, const std::function<void(const graph::Expr&)>& f) {
    std::unordered_set<const graph::ExprNode*> seen;
    std::function<void(const graph::Expr&)> walk = [&](const graph::Expr& e) {
        if (!e.defined() || !seen.insert(e.get()).second) return;
        if (const auto* c = e.as<graph::Call>()) {
            for (const auto& a : c->args) walk(a);
        } else if (const auto* t = e.as<graph::Tuple>()) {
            for (const auto& a : t->fields) walk(a);
        } else if (const auto* g = e.as<graph::TupleGetItem>()) {
            walk(g->tuple);
        }
        f(e);
    };
    walk(root);
}

// Op name → number of calls in `fn`.
inline std::map<std::string, int> op_histogram(const graph::Function& fn) {
    std::map<std::string, int> h;
    visit_graph(fn.body, [&](const graph::Expr& e) {
        if (const auto* c = e.as<graph::Call>(); c && c->op.defined()) ++h[c->op->name];
    });
    return h;
}

inline int count_constants(const graph::Function& fn) {
    int n = 0;
    visit_graph(fn.body, [&](const graph::Expr& e) { n += e.is<graph::Constant>(); });
    return n;
}

using anvil::testing::contains;

// The UserError message of a call, or a test failure (errors/expect_message.h).
using ::anvil::errors_test::user_error_of;

}  // namespace anvil::frontend::testing
