#include "ops/product_dtype.h"

#include "support/error.h"

namespace anvil::ops {

namespace {

bool integer_operand(DataType t) {
    return t == DataType::int_(8) || t == DataType::uint(8) || t == DataType::int_(16) ||
           t == DataType::int32();
}

}  // namespace

DataType product_dtype(const std::string& op, DataType a, DataType b, DataType out_dtype,
                       const SourceLoc& loc, const char* a_name, const char* b_name) {
    if (out_dtype.is_void() || (out_dtype == a && a.is_floating())) {
        if (!a.is_floating()) {
            user_error(loc) << op << " needs floating-point " << a_name << ", got " << a.str()
                            << (a.is_integer() ? " (an integer product states out_dtype=\"int32\")"
                                               : "");
        }
        if (a != b) {
            user_error(loc) << op << ": " << a_name << " and " << b_name << " types " << a.str()
                            << " and " << b.str() << " differ; insert a cast";
        }
        return a;
    }
    if (out_dtype == DataType::float32() && (a.is_bfloat() || a == DataType::float16())) {
        // Half-precision operands summed in float32 (to_mixed_precision's products).
        if (a != b) {
            user_error(loc) << op << ": " << a_name << " and " << b_name << " types " << a.str()
                            << " and " << b.str() << " differ; insert a cast";
        }
        return out_dtype;
    }
    if (out_dtype != DataType::int32()) {
        user_error(loc) << op << ": out_dtype " << out_dtype.str()
                        << " is not supported (int32 for integer operands, float32 for float16 "
                           "or bfloat16 ones, or the operands' own floating type)";
    }
    for (auto [t, name] : {std::pair{a, a_name}, std::pair{b, b_name}}) {
        if (!integer_operand(t)) {
            user_error(loc) << op << " with out_dtype=\"int32\" needs int8, uint8, int16 or int32 "
                            << name << ", got " << t.str();
        }
    }
    return out_dtype;
}

PrimExpr widen(const PrimExpr& v, DataType acc) {
    return v.dtype() == acc ? v : cast(acc, v);
}

}  // namespace anvil::ops
