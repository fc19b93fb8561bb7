#include "graph/text_attrs.h"

namespace anvil::graph::text {

namespace {

const char* kind_text(const AttrValue& v) {
    switch (v.kind) {
        case AttrValue::Kind::Int:
            return "an integer";
        case AttrValue::Kind::Float:
            return "a floating-point number";
        case AttrValue::Kind::Bool:
            return "a boolean";
        case AttrValue::Kind::String:
            return "a string";
        case AttrValue::Kind::Name:
            return "a name";
        case AttrValue::Kind::List:
            return "a list";
        case AttrValue::Kind::Shape:
            return "a shape";
    }
    return "?";
}

class AttrWriter : public AttrVisitor {
public:
    AttrWriter(std::vector<AttrArg>& args, const std::string& op) : args_(args), op_(op) {}

    void visit(const char* name, int64_t* v) override {
        if (const AttrValue* a = find(name)) *v = integer(*a, name, "an integer");
    }
    void visit(const char* name, double* v) override {
        if (const AttrValue* a = find(name)) *v = number(*a, name, "a number");
    }
    void visit(const char* name, bool* v) override {
        const AttrValue* a = find(name);
        if (!a) return;
        if (a->kind != AttrValue::Kind::Bool) wrong(*a, name, "True or False");
        *v = a->b;
    }
    void visit(const char* name, std::string* v) override {
        const AttrValue* a = find(name);
        if (!a) return;
        if (a->kind != AttrValue::Kind::String) wrong(*a, name, "a string");
        *v = a->s;
    }
    // Nested lists read row by row, as TVM writes pad_width=[[0, 0], [1, 1]].
    void visit(const char* name, std::vector<int64_t>* v) override {
        const AttrValue* a = find(name);
        if (!a) return;
        if (a->kind != AttrValue::Kind::List) wrong(*a, name, "a list of integers");
        v->clear();
        for (const AttrValue* item : leaves(*a)) {
            v->push_back(integer(*item, name, "a list of integers"));
        }
    }
    void visit(const char* name, std::vector<double>* v) override {
        const AttrValue* a = find(name);
        if (!a) return;
        if (a->kind != AttrValue::Kind::List) wrong(*a, name, "a list of numbers");
        v->clear();
        for (const AttrValue* item : leaves(*a))
            v->push_back(number(*item, name, "a list of numbers"));
    }
    void visit(const char* name, std::vector<std::string>* v) override {
        const AttrValue* a = find(name);
        if (!a) return;
        if (a->kind != AttrValue::Kind::List) wrong(*a, name, "a list of strings");
        v->clear();
        for (const auto& item : a->items) {
            if (item.kind != AttrValue::Kind::String) wrong(item, name, "a list of strings");
            v->push_back(item.s);
        }
    }
    void visit(const char* name, DataType* v) override {
        const AttrValue* a = find(name);
        if (!a) return;
        if (a->kind != AttrValue::Kind::String && a->kind != AttrValue::Kind::Name) {
            wrong(*a, name, "a type name such as \"float32\"");
        }
        if (a->s.empty()) {
            *v = DataType::void_();
        } else if (!DataType::parse(a->s, v)) {
            fail_at(a->at.line, a->at.col,
                    "attribute '" + std::string(name) + "' of " + op_ + ": unknown type '" + a->s +
                        "'");
        }
    }
    void visit(const char* name, std::vector<PrimExpr>* v) override {
        const AttrValue* a = find(name);
        if (!a) return;
        if (a->kind != AttrValue::Kind::Shape) wrong(*a, name, "a shape such as (n, 3, 224)");
        *v = a->dims;
    }
    std::vector<std::string> fields;  // every name visited, for the unknown-attribute message

private:
    const AttrValue* find(const char* name) {
        fields.emplace_back(name);
        for (auto& a : args_) {
            if (a.name.text == name) {
                a.used = true;
                return &a.value;
            }
        }
        return nullptr;
    }
    [[noreturn]] void wrong(const AttrValue& a, const char* name, const std::string& want) const {
        fail_at(a.at.line, a.at.col,
                "attribute '" + std::string(name) + "' of " + op_ + " takes " + want + ", found " +
                    kind_text(a));
    }
    // The items of a list, or of its rows when it is a list of lists of one length.
    std::vector<const AttrValue*> leaves(const AttrValue& list) const {
        std::vector<const AttrValue*> out;
        bool rows = !list.items.empty() && list.items[0].kind == AttrValue::Kind::List;
        for (const auto& item : list.items) {
            if (!rows) {
                out.push_back(&item);
                continue;
            }
            if (item.kind != AttrValue::Kind::List ||
                item.items.size() != list.items[0].items.size()) {
                fail_at(item.at.line, item.at.col,
                        "a list of rows must have rows of one length, as [[0, 0], [1, 1]]");
            }
            for (const auto& leaf : item.items) out.push_back(&leaf);
        }
        return out;
    }
    int64_t integer(const AttrValue& a, const char* name, const std::string& want) const {
        if (a.kind != AttrValue::Kind::Int) wrong(a, name, want);
        return a.i;
    }
    double number(const AttrValue& a, const char* name, const std::string& want) const {
        if (a.kind == AttrValue::Kind::Int) return static_cast<double>(a.i);
        if (a.kind != AttrValue::Kind::Float) wrong(a, name, want);
        return a.f;
    }

    std::vector<AttrArg>& args_;
    const std::string& op_;
};

}  // namespace

void write_attrs(Attrs& attrs, std::vector<AttrArg>& args, const std::string& op) {
    AttrWriter writer(args, op);
    attrs.visit_fields(writer);
    for (const auto& a : args) {
        if (a.used) continue;
        std::string known;
        for (const auto& f : writer.fields) known += (known.empty() ? "" : ", ") + f;
        fail_at(a.name.line, a.name.col,
                op + " has no attribute '" + a.name.text + "' (" +
                    (known.empty() ? "it has none" : "it has " + known) + ")");
    }
}

}  // namespace anvil::graph::text
