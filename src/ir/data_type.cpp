#include "ir/data_type.h"

#include <cstdlib>

namespace anvil {

std::string DataType::str() const {
    if (is_void()) return "void";
    std::string base;
    switch (code_) {
        case Code::Int:
            base = "int" + std::to_string(bits_);
            break;
        case Code::UInt:
            base = "uint" + std::to_string(bits_);
            break;
        case Code::Float:
            base = "float" + std::to_string(bits_);
            break;
        case Code::BFloat:
            base = "bfloat" + std::to_string(bits_);
            break;
        case Code::Bool:
            base = "bool";
            break;
        case Code::Handle:
            base = "handle";
            break;
        case Code::String:
            base = "string";
            break;
    }
    if (lanes_ > 1) base += "x" + std::to_string(lanes_);
    return base;
}

bool DataType::parse(const std::string& text, DataType* out) {
    std::string s = text;
    int lanes = 1;
    if (auto x = s.find('x'); x != std::string::npos) {
        char* end = nullptr;
        lanes = static_cast<int>(std::strtol(s.c_str() + x + 1, &end, 10));
        if (*end != '\0' || lanes < 1) return false;
        s = s.substr(0, x);
    }
    auto with_bits = [&](const char* prefix, Code code, bool (*valid)(long)) {
        size_t n = std::char_traits<char>::length(prefix);
        if (s.compare(0, n, prefix) != 0 || s.size() == n) return false;
        char* end = nullptr;
        long bits = std::strtol(s.c_str() + n, &end, 10);
        if (*end != '\0' || !valid(bits)) return false;
        *out = DataType(code, static_cast<int>(bits), lanes);
        return true;
    };
    auto int_bits = [](long b) { return b == 8 || b == 16 || b == 32 || b == 64; };
    auto float_bits = [](long b) { return b == 16 || b == 32 || b == 64; };
    auto bf_bits = [](long b) { return b == 16; };
    if (s == "bool") {
        *out = DataType::bool_(lanes);
        return true;
    }
    if (s == "handle") {
        *out = DataType::handle();
        return lanes == 1;
    }
    if (s == "string") {
        *out = DataType::string();
        return lanes == 1;
    }
    if (s == "void") {
        *out = DataType::void_();
        return lanes == 1;
    }
    return with_bits("uint", Code::UInt, int_bits) || with_bits("int", Code::Int, int_bits) ||
           with_bits("bfloat", Code::BFloat, bf_bits) ||
           with_bits("float", Code::Float, float_bits);
}

}  // namespace anvil
