#include "runtime/packed_func.h"

#include "runtime/last_error.h"

namespace anvil::runtime {
namespace {

// The closure of a C++ PackedFunc; its AnvilFunctionObj points `resource` at it and owns it.
class LambdaHolder : public Object {
public:
    explicit LambdaHolder(PackedFunc::Body body) : body(std::move(body)) {}
    PackedFunc::Body body;
};

int call_lambda(const AnvilValue* args, const int* type_codes, int num_args, AnvilValue* ret,
                int* ret_type_code, void* resource) {
    return catch_to_status([&] {
        const auto* holder = static_cast<const LambdaHolder*>(resource);
        RetValue result;
        holder->body(Args(args, type_codes, num_args), &result);
        result.move_to_c(ret, ret_type_code);
        return 0;
    });
}

// Returned strings live here until the thread returns the next one (see packed_func.h).
std::string& returned_string_buffer() {
    thread_local std::string buffer;
    return buffer;
}

}  // namespace

const char* type_code_name(int type_code) {
    switch (type_code) {
        case kAnvilInt:
            return "int";
        case kAnvilFloat:
            return "float";
        case kAnvilHandle:
            return "handle";
        case kAnvilNull:
            return "null";
        case kAnvilDLTensor:
            return "DLTensor*";
        case kAnvilFunction:
            return "function";
        case kAnvilStr:
            return "str";
        default:
            return "unknown type code";
    }
}

// ---- ArgValue / Args ----------------------------------------------------------------------

void ArgValue::type_mismatch(const char* expected) const {
    user_error() << "argument " << index_ << ": expected " << expected << ", got "
                 << type_code_name(type_code_);
    ANVIL_UNREACHABLE();
}

int64_t ArgValue::as_int() const {
    if (type_code_ != kAnvilInt) type_mismatch("int");
    return value_.v_int64;
}

double ArgValue::as_float() const {
    if (type_code_ == kAnvilInt) return static_cast<double>(value_.v_int64);
    if (type_code_ != kAnvilFloat) type_mismatch("float");
    return value_.v_float64;
}

DLTensor* ArgValue::as_tensor() const {
    if (type_code_ == kAnvilNull) return nullptr;
    if (type_code_ != kAnvilDLTensor) type_mismatch("DLTensor*");
    return static_cast<DLTensor*>(value_.v_handle);
}

void* ArgValue::as_handle() const {
    if (type_code_ == kAnvilNull) return nullptr;
    if (type_code_ != kAnvilHandle && type_code_ != kAnvilDLTensor) type_mismatch("handle");
    return value_.v_handle;
}

const char* ArgValue::as_c_str() const {
    if (type_code_ != kAnvilStr) type_mismatch("str");
    return value_.v_str;
}

PackedFunc ArgValue::as_func() const {
    if (type_code_ == kAnvilNull) return {};
    if (type_code_ != kAnvilFunction) type_mismatch("function");
    return PackedFunc::borrow(static_cast<AnvilFunctionHandle>(value_.v_handle));
}

ArgValue Args::operator[](int i) const {
    if (i < 0 || i >= size_) {
        user_error() << "argument " << i << " requested but the function got " << size_
                     << " argument" << (size_ == 1 ? "" : "s");
    }
    return ArgValue(values_[i], type_codes_[i], i);
}

// ---- RetValue -----------------------------------------------------------------------------

void RetValue::type_mismatch(const char* expected) const {
    user_error() << "return value: expected " << expected << ", got " << type_code_name(type_code_);
    ANVIL_UNREACHABLE();
}

int64_t RetValue::as_int() const {
    if (type_code_ != kAnvilInt) type_mismatch("int");
    return value_.v_int64;
}

double RetValue::as_float() const {
    if (type_code_ == kAnvilInt) return static_cast<double>(value_.v_int64);
    if (type_code_ != kAnvilFloat) type_mismatch("float");
    return value_.v_float64;
}

DLTensor* RetValue::as_tensor() const {
    if (type_code_ == kAnvilNull) return nullptr;
    if (type_code_ != kAnvilDLTensor) type_mismatch("DLTensor*");
    return static_cast<DLTensor*>(value_.v_handle);
}

void* RetValue::as_handle() const {
    if (type_code_ == kAnvilNull) return nullptr;
    if (type_code_ != kAnvilHandle && type_code_ != kAnvilDLTensor) type_mismatch("handle");
    return value_.v_handle;
}

std::string RetValue::as_string() const {
    if (type_code_ != kAnvilStr) type_mismatch("str");
    return string_;
}

PackedFunc RetValue::as_func() const {
    if (type_code_ == kAnvilNull) return {};
    if (type_code_ != kAnvilFunction) type_mismatch("function");
    return PackedFunc::borrow(const_cast<AnvilFunctionObj*>(func_.get()));
}

void RetValue::set_null() {
    *this = RetValue();
}

void RetValue::set_int(int64_t value) {
    set_null();
    type_code_ = kAnvilInt;
    value_.v_int64 = value;
}

void RetValue::set_float(double value) {
    set_null();
    type_code_ = kAnvilFloat;
    value_.v_float64 = value;
}

void RetValue::set_handle(void* value) {
    set_null();
    type_code_ = value ? kAnvilHandle : kAnvilNull;
    value_.v_handle = value;
}

void RetValue::set_tensor(DLTensor* value) {
    set_null();
    type_code_ = value ? kAnvilDLTensor : kAnvilNull;
    value_.v_handle = value;
}

void RetValue::set_string(std::string value) {
    set_null();
    type_code_ = kAnvilStr;
    string_ = std::move(value);
}

void RetValue::set_func(const PackedFunc& value) {
    set_null();
    if (!value.defined()) return;
    type_code_ = kAnvilFunction;
    func_ = Ref<AnvilFunctionObj>(value.handle());
}

void RetValue::move_to_c(AnvilValue* ret, int* ret_type_code) {
    AnvilValue out = value_;
    if (type_code_ == kAnvilStr) {
        std::string& buffer = returned_string_buffer();
        buffer = std::move(string_);
        out.v_str = buffer.c_str();
    } else if (type_code_ == kAnvilFunction) {
        func_->inc_ref();  // the reference the C caller now owns
        out.v_handle = const_cast<AnvilFunctionObj*>(func_.get());
    }
    *ret = out;
    *ret_type_code = type_code_;
    set_null();
}

RetValue RetValue::from_c(AnvilValue value, int type_code) {
    RetValue result;
    switch (type_code) {
        case kAnvilNull:
            break;
        case kAnvilInt:
            result.set_int(value.v_int64);
            break;
        case kAnvilFloat:
            result.set_float(value.v_float64);
            break;
        case kAnvilHandle:
            result.set_handle(value.v_handle);
            break;
        case kAnvilDLTensor:
            result.set_tensor(static_cast<DLTensor*>(value.v_handle));
            break;
        case kAnvilStr:
            result.set_string(value.v_str ? value.v_str : "");
            break;
        case kAnvilFunction:
            result.set_func(PackedFunc::adopt(static_cast<AnvilFunctionHandle>(value.v_handle)));
            break;
        default:
            user_error() << "packed function returned unknown type code " << type_code;
    }
    return result;
}

// ---- PackedFunc ---------------------------------------------------------------------------

PackedFunc::PackedFunc(AnvilPackedCFunc fn, void* resource, Ref<Object> owner) {
    if (fn == nullptr) user_error() << "PackedFunc: the C function pointer is NULL";
    obj_ = make_ref<AnvilFunctionObj>(fn, resource, std::move(owner));
}

PackedFunc::PackedFunc(Body body) {
    if (!body) user_error() << "PackedFunc: the C++ function is empty";
    auto holder = make_ref<LambdaHolder>(std::move(body));
    void* resource = const_cast<LambdaHolder*>(holder.get());
    obj_ = make_ref<AnvilFunctionObj>(&call_lambda, resource, std::move(holder));
}

PackedFunc PackedFunc::borrow(AnvilFunctionHandle handle) {
    return PackedFunc(Ref<AnvilFunctionObj>(handle));
}

PackedFunc PackedFunc::adopt(AnvilFunctionHandle handle) {
    PackedFunc result = borrow(handle);
    if (handle) handle->dec_ref();  // the borrow's reference replaces the caller's
    return result;
}

AnvilFunctionHandle PackedFunc::new_handle() const {
    if (!obj_) return nullptr;
    obj_->inc_ref();
    return handle();
}

int PackedFunc::call_packed(const AnvilValue* args, const int* type_codes, int num_args,
                            AnvilValue* ret, int* ret_type_code) const noexcept {
    if (!obj_) {
        set_last_error("called a null PackedFunc");
        return -1;
    }
    return catch_to_status(
        [&] { return obj_->fn(args, type_codes, num_args, ret, ret_type_code, obj_->resource); });
}

RetValue PackedFunc::call(const AnvilValue* args, const int* type_codes, int num_args) const {
    AnvilValue ret{};
    int ret_type_code = kAnvilNull;
    // Cleared so that a callee failing without a message is not blamed for an older error.
    clear_last_error();
    if (call_packed(args, type_codes, num_args, &ret, &ret_type_code) != 0) {
        const char* message = anvil_get_last_error();
        throw UserError(*message ? message : "packed function failed without an error message");
    }
    return RetValue::from_c(ret, ret_type_code);
}

}  // namespace anvil::runtime

extern "C" {

int anvil_func_call(AnvilFunctionHandle fn, const AnvilValue* args, const int* type_codes,
                    int num_args, AnvilValue* ret, int* ret_type_code) {
    using anvil::runtime::PackedFunc;
    if (fn == nullptr) {
        anvil::runtime::set_last_error("anvil_func_call: function handle is NULL");
        return -1;
    }
    // Callers that ignore the result may pass NULL; a returned function reference is then
    // released here instead of leaking.
    AnvilValue ignored_value{};
    int ignored_code = kAnvilNull;
    bool ignore = ret == nullptr || ret_type_code == nullptr;
    AnvilValue* ret_slot = ignore ? &ignored_value : ret;
    int* code_slot = ignore ? &ignored_code : ret_type_code;
    *code_slot = kAnvilNull;
    int status = anvil::runtime::catch_to_status(
        [&] { return fn->fn(args, type_codes, num_args, ret_slot, code_slot, fn->resource); });
    if (status == 0 && ignore && ignored_code == kAnvilFunction) {
        PackedFunc::adopt(static_cast<AnvilFunctionHandle>(ignored_value.v_handle));
    }
    return status;
}

int anvil_func_free(AnvilFunctionHandle fn) {
    if (fn != nullptr) fn->dec_ref();
    return 0;
}

}  // extern "C"
