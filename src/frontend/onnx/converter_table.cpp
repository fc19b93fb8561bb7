// THE table of ONNX converters: op type, the opset range whose semantics the converter
// implements (inclusive), and the converter. An op type may appear several times with disjoint
// ranges when its semantics changed. Shape arithmetic on constants is evaluated before a node
// reaches its converter (shape_eval.cpp).
#include "frontend/onnx/convert_ops.h"

namespace anvil::frontend {

const std::vector<Converter>& converter_table() {
    constexpr int kNew = kNewestOpset;
    static const std::vector<Converter> table = {
        // elementwise arithmetic and comparisons (convert_elementwise.cpp)
        {"Add", 1, kNew, convert_binary},
        {"Sub", 1, kNew, convert_binary},
        {"Mul", 1, kNew, convert_binary},
        {"Div", 1, kNew, convert_binary},
        {"Pow", 1, kNew, convert_binary},
        {"Equal", 1, kNew, convert_binary},
        {"Less", 1, kNew, convert_binary},
        {"Greater", 1, kNew, convert_binary},
        {"LessOrEqual", 12, kNew, convert_binary},
        {"GreaterOrEqual", 12, kNew, convert_binary},
        {"And", 1, kNew, convert_binary},
        {"Or", 1, kNew, convert_binary},
        {"Xor", 1, kNew, convert_xor},
        {"Not", 1, kNew, convert_unary},
        {"Max", 1, kNew, convert_variadic},
        {"Min", 1, kNew, convert_variadic},
        {"Sum", 1, kNew, convert_variadic},
        {"Mean", 1, kNew, convert_variadic},
        {"Where", 9, kNew, convert_where},
        // unary math and activations
        {"Relu", 1, kNew, convert_unary},
        {"Sigmoid", 1, kNew, convert_unary},
        {"Tanh", 1, kNew, convert_unary},
        {"Erf", 9, kNew, convert_unary},
        {"Sqrt", 1, kNew, convert_unary},
        {"Exp", 1, kNew, convert_unary},
        {"Log", 1, kNew, convert_unary},
        {"Neg", 1, kNew, convert_unary},
        {"Abs", 1, kNew, convert_unary},
        {"Floor", 1, kNew, convert_unary},
        {"Ceil", 1, kNew, convert_unary},
        {"Round", 11, kNew, convert_unary},
        {"Reciprocal", 1, kNew, convert_reciprocal},
        {"Clip", 1, kNew, convert_clip},
        {"LeakyRelu", 1, kNew, convert_leaky_relu},
        {"PRelu", 7, kNew, convert_prelu},
        {"Elu", 1, kNew, convert_elu},
        {"Selu", 1, kNew, convert_selu},
        {"HardSigmoid", 1, kNew, convert_hard_sigmoid},
        {"HardSwish", 14, kNew, convert_unary},
        {"Softplus", 1, kNew, convert_unary},
        {"Mish", 18, kNew, convert_unary},
        {"Gelu", 20, kNew, convert_gelu},
        {"Cast", 6, kNew, convert_cast},
        {"Identity", 1, kNew, convert_identity},
        {"Dropout", 1, kNew, convert_dropout},
        // constants and shapes (convert_tensor.cpp)
        {"Constant", 1, kNew, convert_constant},
        {"Shape", 1, kNew, convert_shape},
        {"Size", 1, kNew, convert_size},
        {"ConstantOfShape", 9, kNew, convert_constant_of_shape},
        {"Range", 11, kNew, convert_range},
        // data movement (convert_transform.cpp)
        {"Reshape", 1, kNew, convert_reshape},
        {"Flatten", 1, kNew, convert_flatten},
        {"Transpose", 1, kNew, convert_transpose},
        {"Squeeze", 1, kNew, convert_squeeze},
        {"Unsqueeze", 1, kNew, convert_unsqueeze},
        {"Concat", 1, kNew, convert_concat},
        {"Split", 2, kNew, convert_split},
        {"Expand", 8, kNew, convert_expand},
        {"Tile", 6, kNew, convert_tile},
        {"Slice", 1, kNew, convert_slice},
        {"Gather", 1, kNew, convert_gather},
        {"GatherElements", 11, kNew, convert_gather_elements},
        {"Pad", 1, kNew, convert_pad},
        {"DepthToSpace", 1, kNew, convert_depth_to_space},
        {"SpaceToDepth", 1, kNew, convert_space_to_depth},
        {"Resize", 10, kNew, convert_resize},
        {"Upsample", 7, 9, convert_resize},
        // convolutions and pools (convert_conv.cpp)
        {"Conv", 1, kNew, convert_conv},
        {"ConvTranspose", 1, kNew, convert_conv_transpose},
        {"MaxPool", 1, kNew, convert_pool},
        {"AveragePool", 1, kNew, convert_pool},
        {"GlobalMaxPool", 1, kNew, convert_global_pool},
        {"GlobalAveragePool", 1, kNew, convert_global_pool},
        // dense products, normalizations, pools, softmax (convert_nn.cpp)
        {"Gemm", 1, kNew, convert_gemm},
        {"MatMul", 1, kNew, convert_matmul},
        {"BatchNormalization", 1, kNew, convert_batch_norm},
        {"LayerNormalization", 17, kNew, convert_layer_norm},
        {"InstanceNormalization", 1, kNew, convert_instance_norm},
        {"Softmax", 1, kNew, convert_softmax},
        {"LogSoftmax", 1, kNew, convert_softmax},
        // reductions (convert_reduce.cpp)
        {"ReduceSum", 1, kNew, convert_reduce},
        {"ReduceMean", 1, kNew, convert_reduce},
        {"ReduceMax", 1, kNew, convert_reduce},
        {"ReduceMin", 1, kNew, convert_reduce},
        {"ReduceProd", 1, kNew, convert_reduce},
        {"ArgMax", 1, kNew, convert_arg_reduce},
        {"ArgMin", 1, kNew, convert_arg_reduce},
    };
    return table;
}

}  // namespace anvil::frontend
