// The AMX tile calls of tir's tensorize_amx (ir/intrinsics.h) as Intel AMX instructions through
// LLVM's intrinsics with explicit tile numbers (the _tile_* forms): the tile registers are
// numbered by the loop IR, not allocated by LLVM, so a tile keeps its value across the loops
// between the calls (an accumulator over a convolution's reduction loops).
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>

#include <array>

#include "codegen/llvm/codegen_llvm.h"
#include "ir/intrinsics.h"
#include "support/error.h"

namespace anvil::codegen {

namespace {

// A constant argument of an AMX call (tile numbers and configurations are immediates).
int64_t constant_arg(const Call* op, size_t i, int64_t lo, int64_t hi, const std::string& fn) {
    const int64_t* v = i < op->args.size() ? as_const_int(op->args[i]) : nullptr;
    ANVIL_CHECK(v && *v >= lo && *v <= hi) << fn << ": " << op->name << " argument " << i
                                           << " must be a constant in [" << lo << ", " << hi << "]";
    return *v;
}

}  // namespace

llvm::Value* CodeGenLLVM::tile_address(const Call* op, size_t i) {
    const Load* load = i < op->args.size() ? op->args[i].as<Load>() : nullptr;
    ANVIL_CHECK(load && load->indices.size() == 1 && load->dtype.is_scalar())
        << func_name_ << ": " << op->name << " takes a scalar load of a flattened buffer";
    return element_address(buffer_info(load->buffer), load->dtype, index_value(load->indices[0]),
                           /*inbounds=*/true);
}

llvm::Value* CodeGenLLVM::emit_amx(const Call* op) {
    ANVIL_CHECK(target_.has_feature("amx-tile"))
        << func_name_ << ": " << op->name << " on a target without amx-tile";
    const int arity = intrin::arity(op->name);
    ANVIL_CHECK(op->args.size() == static_cast<size_t>(arity))
        << func_name_ << ": " << op->name << " takes " << arity << " arguments";
    auto tile = [&](size_t i) {
        return builder_.getInt8(
            static_cast<uint8_t>(constant_arg(op, i, 0, intrin::kAmxTiles - 1, func_name_)));
    };
    if (op->name == intrin::kAmxTileConfig) {
        // The process's permission first: without it the tile instructions raise SIGILL.
        llvm::Value* status = builder_.CreateCall(runtime_function("anvil_request_amx"), {});
        auto* fail = llvm::BasicBlock::Create(ctx_, "amx_refused", function_);
        auto* ok = llvm::BasicBlock::Create(ctx_, "amx_ok", function_);
        builder_.CreateCondBr(builder_.CreateICmpNE(status, builder_.getInt32(0)), fail, ok,
                              llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
        builder_.SetInsertPoint(fail);
        emit_error_return();  // the runtime has set the message
        builder_.CreateBr(ok);
        builder_.SetInsertPoint(ok);
        // The 64-byte configuration (palette 1): bytes 16 + 2t hold tile t's row bytes, byte
        // 48 + t its rows; unused tiles stay 0.
        std::array<uint8_t, 64> cfg{};
        cfg[0] = 1;
        for (size_t t = 0; t < intrin::kAmxTiles; ++t) {
            const int64_t rows = constant_arg(op, 2 * t, 1, 16, func_name_);
            const int64_t bytes = constant_arg(op, 2 * t + 1, 4, 64, func_name_);
            ANVIL_CHECK(bytes % 4 == 0) << func_name_ << ": tile rows of whole words";
            cfg[16 + 2 * t] = static_cast<uint8_t>(bytes);
            cfg[48 + t] = static_cast<uint8_t>(rows);
        }
        auto* cfg_ty = llvm::ArrayType::get(builder_.getInt8Ty(), cfg.size());
        auto* init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint8_t>(cfg));
        auto* global = new llvm::GlobalVariable(
            *module_, cfg_ty, true, llvm::GlobalValue::PrivateLinkage, init, "amx_tile_config");
        global->setAlignment(llvm::Align(64));
        builder_.CreateIntrinsic(llvm::Intrinsic::x86_ldtilecfg, {}, {global});
    } else if (op->name == intrin::kAmxTileRelease) {
        builder_.CreateIntrinsic(llvm::Intrinsic::x86_tilerelease, {}, {});
    } else if (op->name == intrin::kAmxTileZero) {
        builder_.CreateIntrinsic(llvm::Intrinsic::x86_tilezero, {}, {tile(0)});
    } else if (op->name == intrin::kAmxTileLoad || op->name == intrin::kAmxTileStore) {
        llvm::Value* stride = builder_.CreateIntCast(emit(op->args[2]), i64_, true);
        const bool load = op->name == intrin::kAmxTileLoad;
        builder_.CreateIntrinsic(
            load ? llvm::Intrinsic::x86_tileloadd64 : llvm::Intrinsic::x86_tilestored64, {},
            {tile(0), tile_address(op, 1), stride});
    } else {
        const bool bf16 = op->name == intrin::kAmxTileDotBF16;
        ANVIL_CHECK(target_.has_feature(bf16 ? "amx-bf16" : "amx-int8"))
            << func_name_ << ": " << op->name << " on a target without "
            << (bf16 ? "amx-bf16" : "amx-int8");
        builder_.CreateIntrinsic(
            bf16 ? llvm::Intrinsic::x86_tdpbf16ps : llvm::Intrinsic::x86_tdpbusd, {},
            {tile(0), tile(1), tile(2)});
    }
    return builder_.getInt32(0);
}

}  // namespace anvil::codegen
