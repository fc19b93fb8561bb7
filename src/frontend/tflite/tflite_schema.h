// The parts of TensorFlow Lite's flatbuffer schema (schema.fbs, "TFL3") the importer reads,
// declared from the format's public description: enum values and, per table, the index of each
// field read. A flatbuffer table's field i sits at vtable offset 4 + 2 i; a union field takes two
// indices (its type, then its value). New schema versions only append, so these stay valid.
#pragma once

#include <cstdint>

namespace anvil::frontend::tflite {

// enum TensorType : byte
namespace tensor_type {
constexpr int8_t kFloat32 = 0, kFloat16 = 1, kInt32 = 2, kUInt8 = 3, kInt64 = 4, kString = 5,
                 kBool = 6, kInt16 = 7, kComplex64 = 8, kInt8 = 9, kFloat64 = 10, kComplex128 = 11,
                 kUInt64 = 12, kResource = 13, kVariant = 14, kUInt32 = 15, kUInt16 = 16,
                 kInt4 = 17;
}

// enum ActivationFunctionType : byte (the fused activation of many operators)
namespace activation {
constexpr int8_t kNone = 0, kRelu = 1, kReluN1To1 = 2, kRelu6 = 3, kTanh = 4, kSignBit = 5;
}

// enum Padding : byte
namespace padding {
constexpr int8_t kSame = 0, kValid = 1;
}

// Field indices of the tables read.
namespace model_field {
constexpr int kVersion = 0, kOperatorCodes = 1, kSubgraphs = 2, kDescription = 3, kBuffers = 4;
}
namespace subgraph_field {
constexpr int kTensors = 0, kInputs = 1, kOutputs = 2, kOperators = 3, kName = 4;
}
namespace tensor_field {
constexpr int kShape = 0, kType = 1, kBuffer = 2, kName = 3, kQuantization = 4, kIsVariable = 5,
              kSparsity = 6, kShapeSignature = 7;
}
namespace quantization_field {
constexpr int kMin = 0, kMax = 1, kScale = 2, kZeroPoint = 3, kDetailsType = 4, kDetails = 5,
              kQuantizedDimension = 6;
}
namespace operator_code_field {
constexpr int kDeprecatedBuiltinCode = 0, kCustomCode = 1, kVersion = 2, kBuiltinCode = 3;
}
namespace operator_field {
constexpr int kOpcodeIndex = 0, kInputs = 1, kOutputs = 2, kBuiltinOptionsType = 3,
              kBuiltinOptions = 4, kCustomOptions = 5, kCustomOptionsFormat = 6,
              kLargeCustomOptionsOffset = 9, kLargeCustomOptionsSize = 10;
}
namespace buffer_field {
constexpr int kData = 0, kOffset = 1, kSize = 2;
}

// The builtin operators the importer names (and converts: converters.def); values of enum
// BuiltinOperator.
namespace op {
constexpr int32_t kAdd = 0, kAveragePool2D = 1, kConcatenation = 2, kConv2D = 3,
                  kDepthwiseConv2D = 4, kDequantize = 6, kFullyConnected = 9, kLogistic = 14,
                  kMaxPool2D = 17, kMul = 18, kRelu = 19, kReluN1To1 = 20, kRelu6 = 21,
                  kReshape = 22, kResizeBilinear = 23, kSoftmax = 25, kSvdf = 27, kTanh = 28,
                  kCustom = 32, kPad = 34, kGather = 36, kTranspose = 39, kMean = 40, kSub = 41,
                  kDiv = 42, kSqueeze = 43, kUnidirectionalSequenceLstm = 44, kStridedSlice = 45,
                  kSplit = 49, kCast = 53, kPrelu = 54, kMaximum = 55, kMinimum = 57, kPadV2 = 60,
                  kSlice = 65, kTransposeConv = 67, kExpandDims = 70, kSum = 74,
                  kResizeNearestNeighbor = 97, kLeakyRelu = 98, kQuantize = 114, kHardSwish = 117,
                  kBatchMatMul = 126;
}

// union BuiltinOptions: the type value of each options table read (its position in the union,
// from 1).
namespace options_type {
constexpr uint8_t kConv2D = 1, kDepthwiseConv2D = 2, kPool2D = 5, kSvdf = 6, kFullyConnected = 8,
                  kSoftmax = 9, kConcatenation = 10, kAdd = 11, kResizeBilinear = 15, kReshape = 17,
                  kMul = 21, kPad = 22, kGather = 23, kTranspose = 26, kReducer = 27, kSub = 28,
                  kDiv = 29, kSqueeze = 30, kStridedSlice = 32, kSplit = 35, kDequantize = 38,
                  kMaximumMinimum = 39, kPadV2 = 43, kSlice = 48, kTransposeConv = 49,
                  kExpandDims = 52, kUnidirectionalSequenceLstm = 71, kResizeNearestNeighbor = 74,
                  kLeakyRelu = 75, kQuantize = 89, kHardSwish = 91, kBatchMatMul = 101;
}

// Field indices of the options tables read.
namespace conv2d_options {  // also TransposeConvOptions' first three fields
constexpr int kPadding = 0, kStrideW = 1, kStrideH = 2, kActivation = 3, kDilationW = 4,
              kDilationH = 5;
}
namespace depthwise_options {
constexpr int kPadding = 0, kStrideW = 1, kStrideH = 2, kDepthMultiplier = 3, kActivation = 4,
              kDilationW = 5, kDilationH = 6;
}
namespace transpose_conv_options {
constexpr int kPadding = 0, kStrideW = 1, kStrideH = 2, kActivation = 3;
}
namespace pool2d_options {
constexpr int kPadding = 0, kStrideW = 1, kStrideH = 2, kFilterWidth = 3, kFilterHeight = 4,
              kActivation = 5;
}
namespace fully_connected_options {
constexpr int kActivation = 0, kWeightsFormat = 1, kKeepNumDims = 2;
}
namespace softmax_options {
constexpr int kBeta = 0;
}
namespace concatenation_options {
constexpr int kAxis = 0, kActivation = 1;
}
namespace binary_options {  // AddOptions, SubOptions, MulOptions, DivOptions
constexpr int kActivation = 0, kPotScaleInt16 = 1;
}
namespace reshape_options {
constexpr int kNewShape = 0;
}
namespace gather_options {
constexpr int kAxis = 0, kBatchDims = 1;
}
namespace reducer_options {
constexpr int kKeepDims = 0;
}
namespace squeeze_options {
constexpr int kSqueezeDims = 0;
}
namespace split_options {
constexpr int kNumSplits = 0;
}
namespace strided_slice_options {
constexpr int kBeginMask = 0, kEndMask = 1, kEllipsisMask = 2, kNewAxisMask = 3,
              kShrinkAxisMask = 4, kOffset = 5;
}
namespace leaky_relu_options {
constexpr int kAlpha = 0;
}
namespace resize_bilinear_options {
constexpr int kAlignCorners = 2, kHalfPixelCenters = 3;
}
namespace resize_nearest_options {
constexpr int kAlignCorners = 0, kHalfPixelCenters = 1;
}
namespace batch_matmul_options {
constexpr int kAdjX = 0, kAdjY = 1;
}
namespace svdf_options {
constexpr int kRank = 0, kActivation = 1;
}
namespace sequence_lstm_options {
constexpr int kActivation = 0, kCellClip = 1, kProjClip = 2, kTimeMajor = 3;
}

}  // namespace anvil::frontend::tflite
