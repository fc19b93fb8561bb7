// PackedFunc: a callable with the packed C calling convention of anvil/runtime.h.
//
// Every callable — a generated kernel, a function of a loaded module, a C++ lambda registered by
// the compiler — is a PackedFunc, so C and C++ callers see one kind of thing. A PackedFunc is a
// counted handle to an AnvilFunctionObj (the C API's AnvilFunctionHandle): a C function pointer,
// its resource pointer, and an owner that keeps the code and the resource alive (the module a
// kernel lives in, the closure of a lambda).
//
// Values crossing the C ABI, and who owns them:
//   arguments     borrowed for the duration of the call (tensors, strings, functions);
//   kAnvilStr     returned strings stay valid until the callee's thread returns another string;
//   kAnvilFunction a returned function handle carries one reference the caller must release
//                 (anvil_func_free); RetValue does that itself.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "anvil/runtime.h"
#include "runtime/ndarray.h"
#include "support/error.h"
#include "support/ref.h"

struct AnvilFunctionObj : public anvil::Object {
    AnvilFunctionObj(AnvilPackedCFunc fn, void* resource, anvil::Ref<anvil::Object> owner)
        : fn(fn), resource(resource), owner(std::move(owner)) {}

    AnvilPackedCFunc fn;
    void* resource;
    anvil::Ref<anvil::Object> owner;
};

namespace anvil::runtime {

class PackedFunc;

// "int", "float", "DLTensor*", ...: names of type codes for messages.
const char* type_code_name(int type_code);

// One argument of a packed call, viewed in place. Accessors throw UserError naming the argument
// when its type code does not match.
class ArgValue {
public:
    ArgValue(AnvilValue value, int type_code, int index)
        : value_(value), type_code_(type_code), index_(index) {}

    int type_code() const { return type_code_; }
    AnvilValue value() const { return value_; }
    bool is_null() const { return type_code_ == kAnvilNull; }
    int64_t as_int() const;
    double as_float() const;      // an int argument converts
    DLTensor* as_tensor() const;  // null for kAnvilNull
    void* as_handle() const;      // kAnvilHandle, kAnvilDLTensor or kAnvilNull
    const char* as_c_str() const;
    std::string as_string() const {
        const char* text = as_c_str();
        return text ? text : "";
    }
    PackedFunc as_func() const;

private:
    [[noreturn]] void type_mismatch(const char* expected) const;

    AnvilValue value_;
    int type_code_;
    int index_;
};

class Args {
public:
    Args(const AnvilValue* values, const int* type_codes, int size)
        : values_(values), type_codes_(type_codes), size_(size) {}

    int size() const { return size_; }
    // Throws UserError when i is out of range.
    ArgValue operator[](int i) const;
    const AnvilValue* values() const { return values_; }
    const int* type_codes() const { return type_codes_; }

private:
    const AnvilValue* values_;
    const int* type_codes_;
    int size_;
};

// The value a packed function returns. It owns what it holds (strings, function references);
// a DLTensor* or handle it holds is borrowed.
class RetValue {
public:
    int type_code() const { return type_code_; }
    bool is_null() const { return type_code_ == kAnvilNull; }
    int64_t as_int() const;
    double as_float() const;
    DLTensor* as_tensor() const;
    void* as_handle() const;
    std::string as_string() const;
    PackedFunc as_func() const;

    void set_null();
    void set_int(int64_t value);
    void set_float(double value);
    void set_handle(void* value);
    void set_tensor(DLTensor* value);
    void set_string(std::string value);
    void set_func(const PackedFunc& value);

    template <typename T>
    requires(!std::is_same_v<std::decay_t<T>, RetValue>) RetValue& operator=(T&& value) {
        using D = std::decay_t<T>;
        if constexpr (std::is_same_v<D, std::nullptr_t>)
            set_null();
        else if constexpr (std::is_integral_v<D>)
            set_int(static_cast<int64_t>(value));
        else if constexpr (std::is_floating_point_v<D>)
            set_float(static_cast<double>(value));
        else if constexpr (std::is_same_v<D, DLTensor*>)
            set_tensor(value);
        else if constexpr (std::is_same_v<D, const char*> || std::is_same_v<D, char*> ||
                           std::is_same_v<D, std::string>)
            set_string(std::string(std::forward<T>(value)));
        else if constexpr (std::is_same_v<D, PackedFunc>)
            set_func(value);
        else if constexpr (std::is_same_v<D, void*>)
            set_handle(value);
        else
            static_assert(sizeof(D) == 0, "RetValue cannot hold this type");
        return *this;
    }

    // Moves the value into C return slots; a function reference moves to the caller.
    void move_to_c(AnvilValue* ret, int* ret_type_code);
    // Takes over a value a C callee returned (copies a string, adopts a function reference).
    static RetValue from_c(AnvilValue value, int type_code);

private:
    [[noreturn]] void type_mismatch(const char* expected) const;

    int type_code_ = kAnvilNull;
    AnvilValue value_{};
    std::string string_;
    Ref<AnvilFunctionObj> func_;
};

namespace detail {

// Packs one C++ argument for a packed call. Strings and tensors are borrowed, so the argument
// must outlive the call (true for the arguments of one operator() expression).
template <typename T>
void pack_arg(const T& arg, AnvilValue* value, int* type_code);

}  // namespace detail

class PackedFunc {
public:
    using Body = std::function<void(const Args& args, RetValue* ret)>;

    PackedFunc() = default;
    // A C function; `owner` is kept alive as long as the function is (the module holding the
    // code, the object `resource` points into).
    PackedFunc(AnvilPackedCFunc fn, void* resource, Ref<Object> owner = nullptr);
    // A C++ function; exceptions it throws become -1 plus the last error at the C boundary.
    explicit PackedFunc(Body body);

    // Handles from the C API: borrow adds a reference, adopt takes over the caller's.
    static PackedFunc borrow(AnvilFunctionHandle handle);
    static PackedFunc adopt(AnvilFunctionHandle handle);
    // A new reference for C code; release it with anvil_func_free.
    AnvilFunctionHandle new_handle() const;
    // The underlying object, borrowed (e.g. to pass as a kAnvilFunction argument).
    AnvilFunctionHandle handle() const { return const_cast<AnvilFunctionObj*>(obj_.get()); }

    bool defined() const { return obj_.defined(); }
    explicit operator bool() const { return defined(); }
    bool same_as(const PackedFunc& other) const { return obj_.same_as(other.obj_); }

    // The raw C call: returns the callee's status, never throws.
    int call_packed(const AnvilValue* args, const int* type_codes, int num_args, AnvilValue* ret,
                    int* ret_type_code) const noexcept;
    // Calls and throws UserError carrying the callee's last error when it fails.
    RetValue call(const AnvilValue* args, const int* type_codes, int num_args) const;

    // f(tensor, 3, 2.5, "name"): NDArray, DLTensor*, integers, floating point, strings, null,
    // void* and PackedFunc arguments.
    template <typename... Ts>
    RetValue operator()(const Ts&... args) const {
        constexpr size_t n = sizeof...(Ts);
        std::array<AnvilValue, n == 0 ? 1 : n> values{};
        std::array<int, n == 0 ? 1 : n> codes{};
        size_t i = 0;
        ((detail::pack_arg(args, &values[i], &codes[i]), ++i), ...);
        return call(values.data(), codes.data(), static_cast<int>(n));
    }

private:
    explicit PackedFunc(Ref<AnvilFunctionObj> obj) : obj_(std::move(obj)) {}

    Ref<AnvilFunctionObj> obj_;
};

namespace detail {

template <typename T>
void pack_arg(const T& arg, AnvilValue* value, int* type_code) {
    using D = std::decay_t<T>;
    if constexpr (std::is_array_v<T>) {
        static_assert(std::is_same_v<std::remove_cv_t<std::remove_extent_t<T>>, char>,
                      "only character arrays (string literals) can be passed");
        value->v_str = arg;
        *type_code = kAnvilStr;
    } else if constexpr (std::is_same_v<D, NDArray>) {
        value->v_handle = arg.tensor();
        *type_code = kAnvilDLTensor;
    } else if constexpr (std::is_same_v<D, DLTensor*>) {
        value->v_handle = arg;
        *type_code = arg ? kAnvilDLTensor : kAnvilNull;
    } else if constexpr (std::is_integral_v<D>) {
        value->v_int64 = static_cast<int64_t>(arg);
        *type_code = kAnvilInt;
    } else if constexpr (std::is_floating_point_v<D>) {
        value->v_float64 = static_cast<double>(arg);
        *type_code = kAnvilFloat;
    } else if constexpr (std::is_same_v<D, std::string>) {
        value->v_str = arg.c_str();
        *type_code = kAnvilStr;
    } else if constexpr (std::is_same_v<D, const char*> || std::is_same_v<D, char*>) {
        value->v_str = arg;
        *type_code = arg ? kAnvilStr : kAnvilNull;
    } else if constexpr (std::is_same_v<D, std::nullptr_t>) {
        value->v_handle = nullptr;
        *type_code = kAnvilNull;
    } else if constexpr (std::is_same_v<D, PackedFunc>) {
        value->v_handle = arg.handle();
        *type_code = arg.defined() ? kAnvilFunction : kAnvilNull;
    } else if constexpr (std::is_same_v<D, void*>) {
        value->v_handle = arg;
        *type_code = kAnvilHandle;
    } else {
        static_assert(sizeof(D) == 0, "PackedFunc cannot pass this argument type");
    }
}

}  // namespace detail
}  // namespace anvil::runtime
