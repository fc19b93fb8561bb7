#include "support/unique_names.h"

#include <cctype>

#include "support/text_scanner.h"

namespace anvil {

const std::string& UniqueNames::get(const Object* key, const std::string& hint) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string base;
    bool dotted = keep_dots_ && text::is_dotted_name(hint);
    for (char c : hint) {
        base += std::isalnum(static_cast<unsigned char>(c)) || (dotted && c == '.') ? c : '_';
    }
    if (base.empty()) base = "v";
    if (std::isdigit(static_cast<unsigned char>(base[0]))) base = "_" + base;
    std::string name = base;
    for (int n = 1; taken(name); ++n) name = base + "_" + std::to_string(n);
    used_.insert(name);
    return names_.emplace(key, name).first->second;
}

}  // namespace anvil
