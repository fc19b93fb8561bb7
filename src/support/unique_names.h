// The printers' names (tir/printer.cpp, graph/printer.cpp): each object gets one name, made from
// a hint and unique among all the names one table hands out. Characters other than letters and
// digits become '_', an empty hint becomes "v", a leading digit gets a '_' before it, and a name
// already taken (or reserved by the syntax) gets the first free suffix _1, _2, ...
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "support/ref.h"

namespace anvil {

class UniqueNames {
public:
    // `is_reserved`, if given, says which words the syntax keeps for itself.
    // `keep_dots`: a hint that text::is_dotted_name accepts keeps its dots (the graph text's
    // `%features.0.weight`, which reads back as one name).
    explicit UniqueNames(bool (*is_reserved)(const std::string&) = nullptr, bool keep_dots = false)
        : is_reserved_(is_reserved), keep_dots_(keep_dots) {}

    // The name of `key`; `hint` counts only the first time `key` is seen.
    const std::string& get(const Object* key, const std::string& hint);

private:
    bool taken(const std::string& name) const {
        return used_.count(name) || (is_reserved_ && is_reserved_(name));
    }

    bool (*is_reserved_)(const std::string&);
    bool keep_dots_;
    std::unordered_map<const Object*, std::string> names_;
    std::unordered_set<std::string> used_;
};

}  // namespace anvil
