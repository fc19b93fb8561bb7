#include "graph/attr_fields.h"

#include "support/error.h"

namespace anvil::graph {

namespace {

// Finds the field `name` of type T; the pointer is into the visited struct.
template <typename T>
class FieldFinder : public AttrVisitor {
public:
    explicit FieldFinder(const std::string& name) : name_(name) {}
    T* found = nullptr;

    void visit(const char* n, int64_t* v) override { match(n, v); }
    void visit(const char* n, double* v) override { match(n, v); }
    void visit(const char* n, bool* v) override { match(n, v); }
    void visit(const char* n, std::string* v) override { match(n, v); }
    void visit(const char* n, std::vector<int64_t>* v) override { match(n, v); }
    void visit(const char* n, std::vector<double>* v) override { match(n, v); }
    void visit(const char* n, std::vector<std::string>* v) override { match(n, v); }
    void visit(const char* n, DataType* v) override { match(n, v); }
    void visit(const char* n, std::vector<PrimExpr>* v) override { match(n, v); }

private:
    template <typename U>
    void match(const char* n, U* v) {
        if constexpr (std::is_same_v<T, U>) {
            if (name_ == n) found = v;
        }
    }
    const std::string& name_;
};

template <typename T>
std::optional<T> get(const Attrs& a, const std::string& name) {
    FieldFinder<T> f(name);
    const_cast<Attrs&>(a).visit_fields(f);  // only read through the pointer
    if (!f.found) return std::nullopt;
    return *f.found;
}

template <typename T>
Ref<Attrs> set(const Attrs& a, const std::string& name, T value) {
    Ref<Attrs> copy = a.clone();
    FieldFinder<T> f(name);
    const_cast<Attrs&>(*copy).visit_fields(f);  // the copy is not shared yet
    ANVIL_CHECK(f.found) << a.type_name() << " has no field '" << name << "' of that type";
    *f.found = std::move(value);
    return copy;
}

}  // namespace

std::optional<int64_t> attr_int(const Attrs& a, const std::string& name) {
    return get<int64_t>(a, name);
}
std::optional<bool> attr_bool(const Attrs& a, const std::string& name) {
    return get<bool>(a, name);
}
std::optional<double> attr_float(const Attrs& a, const std::string& name) {
    return get<double>(a, name);
}
std::optional<std::string> attr_string(const Attrs& a, const std::string& name) {
    return get<std::string>(a, name);
}
std::optional<std::vector<int64_t>> attr_ints(const Attrs& a, const std::string& name) {
    return get<std::vector<int64_t>>(a, name);
}
std::optional<std::vector<PrimExpr>> attr_shape(const Attrs& a, const std::string& name) {
    return get<std::vector<PrimExpr>>(a, name);
}

Ref<Attrs> attr_with(const Attrs& a, const std::string& name, int64_t value) {
    return set<int64_t>(a, name, value);
}
Ref<Attrs> attr_with(const Attrs& a, const std::string& name, std::vector<int64_t> value) {
    return set<std::vector<int64_t>>(a, name, std::move(value));
}
Ref<Attrs> attr_with(const Attrs& a, const std::string& name, std::string value) {
    return set<std::string>(a, name, std::move(value));
}
Ref<Attrs> attr_with_float(const Attrs& a, const std::string& name, double value) {
    return set<double>(a, name, value);
}
Ref<Attrs> attr_with_bool(const Attrs& a, const std::string& name, bool value) {
    return set<bool>(a, name, value);
}

}  // namespace anvil::graph
