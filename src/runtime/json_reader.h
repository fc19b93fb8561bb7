// Reading the runtime's JSON documents (the graph plan, the VM program) with messages that say
// where a bad value sits: "graph plan: nodes[3] ('conv1'): missing key 'shape'". Internal to
// the runtime.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/ndarray.h"
#include "support/error.h"

namespace anvil::runtime {

using nlohmann::json;

// Where a value sits in the document, for messages: "nodes[3] ('conv1')".
class Reader {
public:
    explicit Reader(std::string where, std::string document = "graph plan")
        : where_(std::move(where)), document_(std::move(document)) {}

    [[noreturn]] void fail(const std::string& what) const {
        user_error() << document_ << ": " << where_ << ": " << what;
        ANVIL_UNREACHABLE();
    }
    const json& get(const json& obj, const char* key) const {
        auto it = obj.find(key);
        if (it == obj.end()) fail(std::string("missing key '") + key + "'");
        return *it;
    }
    int64_t integer(const json& obj, const char* key) const {
        const json& v = get(obj, key);
        if (!v.is_number_integer()) fail(std::string("'") + key + "' must be an integer");
        return v.get<int64_t>();
    }
    int small_int(const json& obj, const char* key) const {
        int64_t v = integer(obj, key);
        if (v < INT32_MIN || v > INT32_MAX) fail(std::string("'") + key + "' is out of range");
        return static_cast<int>(v);
    }
    std::string string(const json& obj, const char* key) const {
        const json& v = get(obj, key);
        if (!v.is_string()) fail(std::string("'") + key + "' must be a string");
        return v.get<std::string>();
    }
    std::vector<int64_t> shape(const json& obj) const {
        const json& v = get(obj, "shape");
        if (!v.is_array()) fail("'shape' must be a list of integers");
        std::vector<int64_t> out;
        for (const json& d : v) {
            if (!d.is_number_integer()) fail("'shape' must be a list of integers");
            out.push_back(d.get<int64_t>());
        }
        return out;
    }
    DLDataType dtype(const json& obj) const {
        std::string text = string(obj, "dtype");
        try {
            return dl_dtype_from_string(text);
        } catch (const UserError& e) {
            fail(e.what());
        }
    }
    const json& array(const json& obj, const char* key) const {
        const json& v = get(obj, key);
        if (!v.is_array()) fail(std::string("'") + key + "' must be a list");
        return v;
    }

private:
    std::string where_;
    std::string document_;
};

}  // namespace anvil::runtime
