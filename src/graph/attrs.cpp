#include "graph/attrs.h"

#include <algorithm>
#include <functional>
#include <sstream>

#include "graph/type.h"
#include "support/error.h"
#include "support/text_scanner.h"

namespace anvil::graph {

namespace {

// Collects every field as (name, printed value) in declaration order. Printing gives one
// canonical spelling per value, which equality and hashing reuse.
class FieldPrinter : public AttrVisitor {
public:
    std::vector<std::pair<std::string, std::string>> fields;
    // The fields that are an unset (void) type: out_dtype of a float convolution.
    std::vector<bool> unset;

    void visit(const char* name, int64_t* v) override { add(name, std::to_string(*v)); }
    void visit(const char* name, double* v) override { add(name, number(*v)); }
    void visit(const char* name, bool* v) override { add(name, *v ? "True" : "False"); }
    void visit(const char* name, std::string* v) override { add(name, text::quote(*v)); }
    void visit(const char* name, std::vector<int64_t>* v) override {
        std::string s = "[";
        for (size_t i = 0; i < v->size(); ++i) s += (i ? ", " : "") + std::to_string((*v)[i]);
        add(name, s + "]");
    }
    void visit(const char* name, std::vector<double>* v) override {
        std::string s = "[";
        for (size_t i = 0; i < v->size(); ++i) s += (i ? ", " : "") + number((*v)[i]);
        add(name, s + "]");
    }
    void visit(const char* name, std::vector<std::string>* v) override {
        std::string s = "[";
        for (size_t i = 0; i < v->size(); ++i) s += (i ? ", " : "") + text::quote((*v)[i]);
        add(name, s + "]");
    }
    void visit(const char* name, DataType* v) override {
        add(name, "\"" + (v->is_void() ? std::string("") : v->str()) + "\"");
        unset.back() = v->is_void();
    }
    void visit(const char* name, std::vector<PrimExpr>* v) override { add(name, shape_str(*v)); }

private:
    void add(const char* name, std::string value) {
        fields.emplace_back(name, std::move(value));
        unset.push_back(false);
    }
    static std::string number(double v) {
        std::ostringstream os;
        os.precision(17);
        os << v;
        std::string s = os.str();
        if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep it a float literal
        return s;
    }
};

std::vector<std::pair<std::string, std::string>> fields_of(const Attrs& a) {
    FieldPrinter p;
    const_cast<Attrs&>(a).visit_fields(p);  // FieldPrinter only reads
    return std::move(p.fields);
}

}  // namespace

bool attrs_equal(const Attrs& a, const Attrs& b) {
    if (&a == &b) return true;
    return std::string(a.type_name()) == b.type_name() && fields_of(a) == fields_of(b);
}

size_t attrs_hash(const Attrs& a) {
    size_t h = std::hash<std::string>()(a.type_name());
    for (const auto& [name, value] : fields_of(a)) {
        h = h * 31 + std::hash<std::string>()(name + "=" + value);
    }
    return h;
}

std::string attrs_str(const Attrs& a, const Attrs* defaults) {
    return attrs_str(a, defaults, {});
}

std::string attrs_str(const Attrs& a, const Attrs* defaults, const std::vector<std::string>& skip) {
    FieldPrinter p;
    const_cast<Attrs&>(a).visit_fields(p);  // FieldPrinter only reads
    const auto& fields = p.fields;
    std::vector<std::pair<std::string, std::string>> base;
    if (defaults) base = fields_of(*defaults);
    std::string out;
    for (size_t i = 0; i < fields.size(); ++i) {
        if (defaults && i < base.size() && base[i] == fields[i]) continue;
        // All fields but unset types: the spelling of workload keys and tuning records, which
        // predate those fields (an integer product's out_dtype is set and shows).
        if (!defaults && p.unset[i]) continue;
        if (std::find(skip.begin(), skip.end(), fields[i].first) != skip.end()) continue;
        if (!out.empty()) out += ", ";
        out += fields[i].first + "=" + fields[i].second;
    }
    return out;
}

}  // namespace anvil::graph
