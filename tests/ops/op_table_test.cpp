// The op table swept op by op, in the spirit of ggml's test-backend-ops: every op kind of ops.def has one row
// here (a count check fails when one is missing), and each row runs the op's shape rule, its forward and backward
// cost and its descriptor round trip. Then every node of every zoo model is re-created from its descriptor and
// must cost exactly what it cost in the model.
#include <gtest/gtest.h>

#include <set>

#include "ridge/cost.hpp"
#include "ridge/error.hpp"
#include "ridge/load.hpp"
#include "ridge/op_rules.hpp"

namespace ridge {
namespace {

struct Row {
  OpKind op;
  const char* desc;  ///< the problem, as a descriptor
  const char* out;   ///< expected shape of output 0
  int64_t flops;     ///< expected forward FLOPs (-1: not costed, the count depends on tensor values)
  int64_t bwd;       ///< expected backward FLOPs (grad-input + grad-weight), every float input needing a gradient
};

// Expected numbers are worked by hand from docs/counting.md, not taken from the code.
const Row kRows[] = {
    {OpKind::Conv, "conv:mb1ic2ih5iw5oc3oh5ow5kh3kw3sh1sw1ph1pw1dh1dw1g1b1", "1x3x5x5", 2775, 5475},
    {OpKind::ConvTranspose, "convtranspose:1x2x3x3,2x1x2x2/strides=2_2", "1x1x6x6", 144, 288},
    {OpKind::Gemm, "gemm:m2k3n4b1", "2x4", 56, 104},
    {OpKind::MatMul, "matmul:bs1m2k3n4", "1x2x4", 48, 96},
    {OpKind::Einsum, "einsum:2x3,3x4/equation=ij%2Cjk-%3Eik", "2x4", 48, 96},
    {OpKind::BatchNormalization, "batchnormalization:1x2x3x3,2,2,2,2", "1x2x3x3", 36, 198},
    {OpKind::LayerNormalization, "layernormalization:2x3,3,3/axis=-1", "2x3", 46, 66},
    {OpKind::RMSNormalization, "rmsnormalization:2x3,3/axis=-1", "2x3", 28, 48},
    {OpKind::Relu, "relu:2x3", "2x3", 6, 6},
    {OpKind::Clip, "clip:2x3", "2x3", 12, 12},
    {OpKind::Sigmoid, "sigmoid:2x3", "2x3", 18, 18},
    {OpKind::Tanh, "tanh:2x3", "2x3", 6, 18},
    {OpKind::Erf, "erf:2x3", "2x3", 6, 24},
    {OpKind::Gelu, "gelu:2x3/approximate=tanh", "2x3", 48, 84},
    {OpKind::Elu, "elu:2x3/alpha=1.0", "2x3", 18, 12},
    {OpKind::Silu, "silu:2x3", "2x3", 24, 30},
    {OpKind::LeakyRelu, "leakyrelu:2x3/alpha=0.01", "2x3", 12, 12},
    {OpKind::HardSigmoid, "hardsigmoid:2x3", "2x3", 24, 18},
    {OpKind::HardSwish, "hardswish:2x3", "2x3", 30, 24},
    {OpKind::Sqrt, "sqrt:2x3", "2x3", 6, 12},
    {OpKind::Exp, "exp:2x3", "2x3", 6, 6},
    {OpKind::Log, "log:2x3", "2x3", 6, 6},
    {OpKind::Neg, "neg:2x3", "2x3", 6, 6},
    {OpKind::Reciprocal, "reciprocal:2x3", "2x3", 6, 18},
    {OpKind::Add, "add:2x3,3", "2x3", 6, 3},
    {OpKind::Sub, "sub:2x3,2x3", "2x3", 6, 6},
    {OpKind::Mul, "mul:2x3,2x3", "2x3", 6, 12},
    {OpKind::Div, "div:2x3,2x3", "2x3", 6, 24},
    {OpKind::Pow, "pow:2x3,2x3", "2x3", 6, 36},
    {OpKind::Equal, "equal:2x3,2x3", "2x3", 6, 0},
    {OpKind::Greater, "greater:2x3,3", "2x3", 6, 0},
    {OpKind::Less, "less:2x3,2x3", "2x3", 6, 0},
    {OpKind::GreaterOrEqual, "greaterorequal:2x3,2x3", "2x3", 6, 0},
    {OpKind::LessOrEqual, "lessorequal:2x3,2x3", "2x3", 6, 0},
    {OpKind::And, "and:2x3@bool,2x3@bool", "2x3", 0, 0},
    {OpKind::Or, "or:2x3@bool,2x3@bool", "2x3", 0, 0},
    {OpKind::Xor, "xor:2x3@bool,2x3@bool", "2x3", 0, 0},
    {OpKind::Mod, "mod:2x3,2x3", "2x3", 6, 0},
    {OpKind::Not, "not:2x3@bool", "2x3", 0, 0},
    {OpKind::Where, "where:2x3@bool,2x3,2x3", "2x3", 0, 0},
    {OpKind::MaxPool, "maxpool:1x1x4x4/kernel_shape=2_2/strides=2_2", "1x1x2x2", 12, 0},
    {OpKind::AveragePool, "averagepool:1x1x4x4/kernel_shape=2_2/strides=2_2", "1x1x2x2", 16, 16},
    {OpKind::AdaptiveAvgPool, "adaptiveavgpool:1x2x4x4/output_size=2_2", "1x2x2x2", 32, 32},
    {OpKind::GlobalAveragePool, "globalaveragepool:1x2x3x3", "1x2x1x1", 18, 18},
    {OpKind::Softmax, "softmax:2x3/axis=-1", "2x3", 26, 22},
    {OpKind::LogSoftmax, "logsoftmax:2x3/axis=-1", "2x3", 28, 22},
    {OpKind::ReduceMean, "reducemean:2x3/axes=1/keepdims=1", "2x1", 6, 2},
    {OpKind::ReduceSum, "reducesum:2x3/axes=1/keepdims=1", "2x1", 4, 0},
    {OpKind::ReduceMax, "reducemax:2x3/axes=1/keepdims=1", "2x1", 4, 0},
    {OpKind::ArgMax, "argmax:2x3/axis=1/keepdims=0", "2", 4, 0},
    {OpKind::Gather, "gather:10x4,2x3", "2x3x4", 0, 24},
    {OpKind::Reshape, "reshape:2x3,2=3_2", "3x2", 0, 0},
    {OpKind::Flatten, "flatten:2x3x4/axis=1", "2x12", 0, 0},
    {OpKind::Squeeze, "squeeze:2x1x3,1=1", "2x3", 0, 0},
    {OpKind::Unsqueeze, "unsqueeze:2x3,1=0", "1x2x3", 0, 0},
    {OpKind::Identity, "identity:2x3", "2x3", 0, 0},
    {OpKind::Dropout, "dropout:2x3", "2x3", 0, 0},
    {OpKind::Transpose, "transpose:2x3/perm=1_0", "3x2", 0, 0},
    {OpKind::Concat, "concat:2x3,2x1/axis=1", "2x4", 0, 0},
    {OpKind::Split, "split:2x4/axis=1/split=1_3", "2x1", 0, 0},
    {OpKind::Slice, "slice:2x5,1=1,1=4,1=1", "2x3", 0, 0},
    {OpKind::Expand, "expand:1x3,2=2_3", "2x3", 0, 0},
    {OpKind::Pad, "pad:2x3,4=1_0_1_0", "4x3", 0, 0},
    {OpKind::Resize, "resize:1x1x2x2,-,-,4=1_1_4_4/mode=linear", "1x1x4x4", 144, 144},
    {OpKind::Cast, "cast:2x3/to=7", "2x3", 0, 0},
    {OpKind::Shape, "shape:2x3", "2", 0, 0},
    {OpKind::Constant, "constant:/out0=2x3", "2x3", 0, 0},
    {OpKind::ConstantOfShape, "constantofshape:2=2_3", "2x3", 0, 0},
    {OpKind::Range, "range:scalar=0,scalar=5,scalar=1", "5", 0, 0},
    {OpKind::GroupNormalization, "groupnormalization:2x4x3,4,4/num_groups=2", "2x4x3", 176, 264},
    // B 1, 2 query heads sharing 1 key/value head, L 3, T 5, head size 4: QK^T and PV 120 MACs each; 2*240 +
    // scale 30 + softmax 6 rows * 23 = 648; backward Q 240 + 6*19 + 30 + 240, K 240, V 240.
    {OpKind::Attention, "attention:1x2x3x4,1x1x5x4,1x1x5x4", "1x2x3x4", 648, 1104},
    {OpKind::RotaryEmbedding, "rotaryembedding:1x2x4x8,1x4x4,1x4x4", "1x2x4x8", 192, 192},
    {OpKind::ScatterND, "scatternd:4x3,2x1@i64,2x3", "4x3", 0, 0},
    {OpKind::ScatterElements, "scatterelements:4x3,2x3@i64,2x3", "4x3", 0, 0},
    {OpKind::GatherElements, "gatherelements:4x3,2x3@i64", "2x3", 0, 0},
    {OpKind::TopK, "topk:2x5,1=3", "2x3", 10, 0},
    // seq 2, batch 1, input 3, hidden 2, no bias. LSTM: 2 steps x (4*2*(3+2) MACs, gate sums 8, gate math 30):
    // 2 * (80 + 38) = 236; backward X 2*(80+30), W 2*48, R 2*32. GRU: 3 gates, gate math 30: 2 * (60 + 6 + 30)
    // = 192. RNN bidirectional: 2 directions x 2 steps x (2*10 + 2 + 2) = 96.
    {OpKind::LSTM, "lstm:2x1x3,1x8x3,1x8x2/hidden_size=2", "2x1x1x2", 236, 380},
    {OpKind::GRU, "gru:2x1x3,1x6x3,1x6x2/hidden_size=2", "2x1x1x2", 192, 300},
    {OpKind::RNN, "rnn:2x1x3,2x2x3,2x2x2/direction=bidirectional/hidden_size=2", "2x2x1x2", 96, 168},
    // Mamba-2 scan, L 3 in chunks of 2 (q = 2: 3 kept pairs; q = 1: 1), H 2, P 2, G 1, N 2 (docs/counting.md):
    // q = 2: MACs 6 + 12 + 32 + 8 = 58, elementwise 24 + 18 + 16 + 16 = 74 -> 190; q = 1: 26 and 42 -> 94.
    // Backward: x 80 + 36, B and C 44 + 20 each, dt 130 + 66, A and dt_bias 8 + 4 each, D 16 + 8 = 488.
    {OpKind::SelectiveScan, "selectivescan:1x3x2x2,1x3x2,2,1x3x1x2,1x3x1x2,2,2/chunk_size=2", "1x3x2x2", 284, 488},
    // Gated delta rule, L 3 in chunks of 2, Hk 1 key head shared by H 2 value heads, K 2, V 2 (docs/counting.md):
    // q = 2 (1 strict pair, 3 kept, no triple), per head MACs 2 + 4 + 24 + 12 = 42, elementwise 58 + 4 + 9 + 8 = 79
    // -> 2 x (84 + 79) = 326; q = 1: MACs 16, elementwise 40 -> 2 x (32 + 40) = 144. Backward: 4 x 116 MACs,
    // the 238 elementwise once more, A_log and dt_bias 2 per token and head (12 each) = 726.
    {OpKind::GatedDeltaRule, "gateddeltarule:1x3x1x2,1x3x1x2,1x3x2x2,1x3x2,1x3x2,2,2/chunk_size=2", "1x3x2x2", 470, 726},
    // Mamba-1 scan, 1 x 2 tokens, 3 channels, 2 states, with D, z and dt_bias: per token and channel MACs 2 x 2 + 1,
    // elementwise 3 x 2 + 4 + 1 + 5 -> 10 + 16 = 26, x 6 = 156; backward twice that + dt_bias 2 x 6 = 324.
    {OpKind::MambaScan, "mambascan:1x2x3,1x2x3,3x2,1x2x2,1x2x2,3,1x2x3,3", "1x2x3", 156, 324},
    // Per-axis int8 weights 4x3 (a scale and zero point per row): (x - zp) * scale, 2 per element; no gradient.
    {OpKind::DequantizeLinear, "dequantizelinear:4x3@int8,4,4@int8/axis=0", "4x3", 24, 0},
    // round(x / scale) + zp, saturated: divide, round, add, clamp twice = 5 per element.
    {OpKind::QuantizeLinear, "quantizelinear:2x3,scalar,scalar@uint8", "2x3", 30, 0},
    // 2 images x 2 channels of 3: 4 rows, E 12: 7E + 2R = 92; backward 8E + 2E (scale) + E (bias) = 132.
    {OpKind::InstanceNormalization, "instancenormalization:2x2x3,2,2", "2x2x3", 92, 132},
    // compare and multiply per element; backward x 2E, slope E + the sum over the broadcast rows (6 - 3).
    {OpKind::PRelu, "prelu:2x3,3", "2x3", 12, 21},
    {OpKind::Abs, "abs:2x3", "2x3", 6, 6},
    {OpKind::Softplus, "softplus:2x3", "2x3", 18, 24},       // exp, add, log; backward sigmoid 3 and multiply
    {OpKind::Selu, "selu:2x3", "2x3", 24, 12},               // ELU's 3 and the scale; backward from the output
    {OpKind::Mish, "mish:2x3", "2x3", 30, 78},               // softplus 3, tanh, multiply; backward 13
    {OpKind::Softsign, "softsign:2x3", "2x3", 18, 24},       // abs, add, divide; backward abs, add, square, divide
    {OpKind::CumSum, "cumsum:2x3,scalar=1", "2x3", 6, 6},
    {OpKind::Hardmax, "hardmax:2x3/axis=-1", "2x3", 4, 0},   // 2 rows x 2 comparisons
    // three operands: 2 adds per output; backward passes through, the broadcast operand sums 6 - 3.
    {OpKind::Sum, "sum:2x3,2x3,3", "2x3", 12, 3},
    {OpKind::Mean, "mean:2x3,2x3", "2x3", 12, 12},           // add and divide; backward a divide per operand
    {OpKind::Max, "max:2x3,3", "2x3", 6, 3},
    {OpKind::Min, "min:2x3,2x3", "2x3", 6, 0},
    {OpKind::GlobalMaxPool, "globalmaxpool:1x2x3x3", "1x2x1x1", 16, 0},
    {OpKind::Upsample, "upsample:1x1x2x2,4=1_1_2_2/mode=linear", "1x1x4x4", 144, 144},
    {OpKind::DepthToSpace, "depthtospace:1x8x2x3/blocksize=2", "1x2x4x6", 0, 0},
    {OpKind::SpaceToDepth, "spacetodepth:1x2x4x6/blocksize=2", "1x8x2x3", 0, 0},
    {OpKind::Tile, "tile:2x3,2=2_1", "4x3", 0, 6},          // backward sums the two copies: 12 - 6
    {OpKind::GatherND, "gathernd:4x3,2x1@i64", "2x3", 0, 6},  // backward scatter-adds the 6 gathered elements
    {OpKind::OneHot, "onehot:2x3@i64,scalar=4,2", "2x3x4", 0, 0},
    // 2x3 reduced over axis 1 (in 6, out 2).
    {OpKind::ReduceMin, "reducemin:2x3/axes=1/keepdims=1", "2x1", 4, 0},
    {OpKind::ReduceProd, "reduceprod:2x3/axes=1/keepdims=1", "2x1", 4, 12},
    {OpKind::ReduceL1, "reducel1:2x3/axes=1/keepdims=1", "2x1", 10, 6},
    {OpKind::ReduceL2, "reducel2:2x3/axes=1/keepdims=1", "2x1", 12, 8},
    {OpKind::ReduceSumSquare, "reducesumsquare:2x3/axes=1/keepdims=1", "2x1", 10, 12},
    {OpKind::ReduceLogSumExp, "reducelogsumexp:2x3/axes=1/keepdims=1", "2x1", 12, 18},
    {OpKind::Floor, "floor:2x3", "2x3", 6, 0},               // piecewise constant: a zero gradient
    {OpKind::Ceil, "ceil:2x3", "2x3", 6, 0},
    {OpKind::Round, "round:2x3", "2x3", 6, 0},
    {OpKind::Sign, "sign:2x3", "2x3", 6, 0},
    {OpKind::Sin, "sin:2x3", "2x3", 6, 12},                  // backward cos(x) * dy
    {OpKind::Cos, "cos:2x3", "2x3", 6, 12},
    {OpKind::Celu, "celu:2x3", "2x3", 24, 18},               // x / alpha, then ELU's 3; backward (y / alpha + 1) dy
    {OpKind::ThresholdedRelu, "thresholdedrelu:2x3", "2x3", 6, 6},
    {OpKind::ArgMin, "argmin:2x3/axis=1/keepdims=0", "2", 4, 0},
    {OpKind::ReduceLogSum, "reducelogsum:2x3/axes=1/keepdims=1", "2x1", 6, 2},  // 4 adds + 2 logs; dy / y
    {OpKind::Trilu, "trilu:3x3", "3x3", 0, 0},
    {OpKind::CastLike, "castlike:2x3,1@fp16", "2x3", 0, 0},
    // uint8 x 2x5x5, int8 w 3x2x3x3, int32 bias, pads 1: 75 outputs x 18 MACs = 1350; 2 MACs + bias + requantize
    // (multiply, round, add zero point, clamp twice) = 2700 + 75 + 375. Inference ops: no gradient.
    {OpKind::QLinearConv,
     "qlinearconv:1x2x5x5@uint8,scalar,scalar@uint8,3x2x3x3@int8,scalar,scalar@int8,scalar,scalar@uint8,3@int32/"
     "pads=1_1_1_1",
     "1x3x5x5", 3150, 0},
    {OpKind::ConvInteger, "convinteger:1x2x5x5@uint8,3x2x3x3@uint8,scalar@uint8,scalar@uint8", "1x3x3x3", 972, 0},
    {OpKind::QLinearMatMul, "qlinearmatmul:2x3@uint8,scalar,scalar@uint8,3x4@int8,scalar,scalar@int8,scalar,scalar@uint8",
     "2x4", 88, 0},                                                     // 24 MACs x 2 + 8 outputs x 5
    {OpKind::MatMulInteger, "matmulinteger:2x3@uint8,3x4@int8", "2x4", 48, 0},
    {OpKind::DynamicQuantizeLinear, "dynamicquantizelinear:2x3", "2x3", 49, 0},  // min, max 10; 9 scalar; 5 x 6
    // 16 outputs x (2 x 3 window multiply-adds + scale, bias, pow, divide); backward 16 x (3 x 3 + 9).
    {OpKind::LRN, "lrn:1x4x2x2/size=3", "1x4x2x2", 160, 288},
    {OpKind::LpNormalization, "lpnormalization:2x3/axis=-1/p=2", "2x3", 18, 28},  // 3E; 5E - R
    // axes 0, 2, 3: 3 groups of 8; 5E + 4R = 120 + 12; backward 8E.
    {OpKind::MeanVarianceNormalization, "meanvariancenormalization:2x3x2x2", "2x3x2x2", 132, 192},
    {OpKind::LpPool, "lppool:1x1x4x4/kernel_shape=2_2/strides=2_2", "1x1x2x2", 32, 64},  // 4 outputs x 4 taps x 2; x 4
    {OpKind::GlobalLpPool, "globallppool:1x2x3x3", "1x2x1x1", 36, 72},
    {OpKind::MaxUnpool, "maxunpool:1x1x2x2,1x1x2x2@i64/kernel_shape=2_2/strides=2_2", "1x1x4x4", 0, 0},
    // 9 output positions x 2 coordinates x 3 = 54, 18 outputs x bilinear 9 = 162; backward X 162, grid 162 + 54.
    {OpKind::GridSample, "gridsample:1x2x4x4,1x3x3x2", "1x2x3x3", 216, 378},
    // 3 boxes x 2 channels x 2x2 bins, 2x2 samples of 9 and their average (4): 24 x 40; backward the same.
    {OpKind::RoiAlign, "roialign:1x2x6x6,3x4,3@i64/output_height=2/output_width=2/sampling_ratio=2", "3x2x2x2", 960,
     960},
    {OpKind::MaxRoiPool, "maxroipool:1x2x6x6,3x5/pooled_shape=2_2", "3x2x2x2", -1, -1},  // windows follow the boxes
    {OpKind::Shrink, "shrink:2x3", "2x3", 18, 6},          // two comparisons and the shift; backward a mask
    {OpKind::IsNaN, "isnan:2x3", "2x3", 6, 0},
    {OpKind::IsInf, "isinf:2x3", "2x3", 6, 0},
    {OpKind::Size, "size:2x3", "scalar", 0, 0},
    {OpKind::EyeLike, "eyelike:3x3", "3x3", 0, 0},
    {OpKind::Tan, "tan:2x3", "2x3", 6, 18},                  // backward (1 + y^2) dy
    {OpKind::Asin, "asin:2x3", "2x3", 6, 24},                // dy / sqrt(1 - x^2)
    {OpKind::Acos, "acos:2x3", "2x3", 6, 30},                // -dy / sqrt(1 - x^2)
    {OpKind::Atan, "atan:2x3", "2x3", 6, 18},                // dy / (1 + x^2)
    {OpKind::Sinh, "sinh:2x3", "2x3", 6, 12},                // cosh(x) dy
    {OpKind::Cosh, "cosh:2x3", "2x3", 6, 12},                // sinh(x) dy
    {OpKind::Asinh, "asinh:2x3", "2x3", 6, 24},              // dy / sqrt(x^2 + 1)
    {OpKind::Acosh, "acosh:2x3", "2x3", 6, 24},              // dy / sqrt(x^2 - 1)
    {OpKind::Atanh, "atanh:2x3", "2x3", 6, 18},              // dy / (1 - x^2)
    {OpKind::ReverseSequence, "reversesequence:4x2x3,2@i64", "4x2x3", 0, 0},
    {OpKind::Scatter, "scatter:4x3,2x3@i64,2x3", "4x3", 0, 0},
    {OpKind::Bernoulli, "bernoulli:2x3", "2x3", 6, 0},
    {OpKind::RandomNormal, "randomnormal:/shape=2_3", "2x3", 0, 0},
    {OpKind::RandomUniform, "randomuniform:/shape=2_3", "2x3", 0, 0},
    {OpKind::RandomNormalLike, "randomnormallike:2x3", "2x3", 0, 0},
    {OpKind::RandomUniformLike, "randomuniformlike:2x3", "2x3", 0, 0},
    // 2 rows of 3 classes: log-softmax 2 x 14, negate 2, mean 2 (an add and the divide); backward 2E + 2R.
    {OpKind::SoftmaxCrossEntropyLoss, "softmaxcrossentropyloss:2x3,2@i64", "scalar", 32, 16},
    {OpKind::NegativeLogLikelihoodLoss, "negativeloglikelihoodloss:2x3,2@i64/reduction=sum", "scalar", 3, 2},
    {OpKind::BitShift, "bitshift:2x3@uint8,2x3@uint8/direction=LEFT", "2x3", 0, 0},  // integers: no FLOPs
    // two 3x3 LUs: pivots, multipliers and updates 16, the diagonal's product 2; backward 2 x (54 + 9 + 1).
    {OpKind::Det, "det:2x3x3", "2", 36, 128},
    // Extents that tensor values decide: folded when the values are known (integers: no FLOPs); Unique's and
    // NonMaxSuppression's work follows the values and is not costed even where a descriptor states the extent.
    {OpKind::NonZero, "nonzero:2x3=1_0_2_0_0_3", "2x3", 0, 0},
    {OpKind::Compress, "compress:4x3,4@bool=1_0_1_1/axis=0", "3x3", 0, 0},
    {OpKind::Unique, "unique:6/out0=4", "4", -1, -1},
    {OpKind::NonMaxSuppression, "nonmaxsuppression:1x6x4,1x1x6/out0=3x3", "3x3", -1, -1},
    {OpKind::MsGelu, "com.microsoft.gelu:2x3", "2x3", 30, 54},
    {OpKind::MsQuickGelu, "com.microsoft.quickgelu:2x3", "2x3", 30, 36},
    {OpKind::MsFastGelu, "com.microsoft.fastgelu:2x3,3", "2x3", 54, 87},
    {OpKind::MsBiasGelu, "com.microsoft.biasgelu:2x3,3", "2x3", 36, 57},
    {OpKind::MsBiasAdd, "com.microsoft.biasadd:2x3,3,2x3", "2x3", 12, 3},
    {OpKind::MsSkipLayerNormalization, "com.microsoft.skiplayernormalization:2x3,2x3,3,3,3", "2x3", 58, 69},
    {OpKind::MsSimplifiedLayerNormalization, "com.microsoft.simplifiedlayernormalization:2x3,3/axis=-1", "2x3", 28, 48},
    {OpKind::MsSkipSimplifiedLayerNormalization, "com.microsoft.skipsimplifiedlayernormalization:2x3,2x3,3,3", "2x3",
     40, 51},
    {OpKind::MsAttention, "com.microsoft.attention:1x3x4,4x12,12/num_heads=2", "1x3x4", 564, 984},
    {OpKind::MsMultiHeadAttention, "com.microsoft.multiheadattention:1x3x4,1x5x4,1x5x4/num_heads=2", "1x3x4", 408, 624},
    {OpKind::MsGroupQueryAttention, "com.microsoft.groupqueryattention:1x3x8,1x3x4,1x3x4/kv_num_heads=2/num_heads=4",
     "1x3x8", 480, 744},
    {OpKind::MsRotaryEmbedding, "com.microsoft.rotaryembedding:1x2x4x8,1x4@i64,16x4,16x4", "1x2x4x8", 192, 192},
};

TEST(OpTable, EveryOpKindHasOneRow) {
  std::set<OpKind> covered;
  for (const Row& r : kRows) EXPECT_TRUE(covered.insert(r.op).second) << op_name(r.op) << " has two rows";
  for (int i = 0; i < kOpKindCount; ++i) {
    const auto k = static_cast<OpKind>(i);
    if (k == OpKind::Unknown) continue;
    EXPECT_TRUE(covered.count(k)) << "ops.def has " << op_name(k) << " but tests/ops/op_table_test.cpp has no row";
  }
}

TEST(OpTable, ShapeCostAndDescriptorOfEveryOp) {
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.desc);
    const ops::OpProblem p = ops::parse_descriptor(r.desc);
    ASSERT_EQ(p.op, r.op);
    const Graph g = ops::graph_of(p, r.desc);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(to_string(g.value(g.nodes[0].outputs[0]).shape), r.out);
    const ModelCost mc = estimate(g);
    if (r.flops < 0) {  // shapes known, the count depends on tensor values: named, never costed as 0
      EXPECT_EQ(mc.nodes[0].status, CostStatus::Unsupported);
      EXPECT_FALSE(mc.nodes[0].reason.empty());
      EXPECT_FALSE(mc.complete());
      continue;
    }
    ASSERT_EQ(mc.nodes[0].status, CostStatus::Ok) << mc.nodes[0].reason;
    EXPECT_EQ(mc.total.flops, r.flops);
    EXPECT_EQ(mc.total.bwd_flops(), r.bwd);
    // Roles: an input in a weight position is a parameter, and the parameters are exactly those inputs.
    Count weights = 0;
    for (size_t i = 0; i < g.nodes[0].inputs.size(); ++i) {
      const int v = g.nodes[0].inputs[i];
      if (v < 0) continue;
      const bool weight = input_role(r.op, static_cast<int>(i)) == InputRole::Weight;
      EXPECT_EQ(g.value(v).kind == ValueKind::Param, weight) << "input " << i;
      if (weight) weights += g.value(v).shape.elements();
    }
    EXPECT_EQ(mc.total.params, weights);
    // The descriptor ridge prints for the node re-creates a node that costs the same.
    const std::string printed = mc.nodes[0].descriptor;
    const Graph again = graph_from_descriptor(printed, DType::F32);
    EXPECT_EQ(estimate(again).total, mc.total) << printed;
    EXPECT_EQ(estimate(again).nodes[0].descriptor, printed);
  }
}

// The one-node graph of a descriptor, its output shape checked, costed (status Ok asserted by the caller's trace).
ModelCost shaped_cost(const char* desc, const char* out) {
  const Graph g = graph_from_descriptor(desc, DType::F32);
  EXPECT_EQ(to_string(g.value(g.nodes[0].outputs[0]).shape), out);
  ModelCost mc = estimate(g);
  EXPECT_EQ(mc.nodes[0].status, CostStatus::Ok) << mc.nodes[0].reason;
  return mc;
}

TEST(OpTable, ThreeDConvolutionAndPoolingUseTheSameRules) {
  struct Case {
    const char* desc;
    const char* out;
    int64_t flops;
  };
  // 3 filters of 2x3x3x3 over 4x4x4 with padding 1: 192 outputs x 54 MACs; pools: 8 windows of 8 taps.
  for (const Case& k : {Case{"conv:1x2x4x4x4,3x2x3x3x3/pads=1_1_1_1_1_1", "1x3x4x4x4", 2 * 192 * 54},
                        Case{"maxpool:1x1x4x4x4/kernel_shape=2_2_2/strides=2_2_2", "1x1x2x2x2", 7 * 8},
                        Case{"averagepool:1x1x4x4x4/kernel_shape=2_2_2/strides=2_2_2", "1x1x2x2x2", 8 * 8}}) {
    SCOPED_TRACE(k.desc);
    EXPECT_EQ(shaped_cost(k.desc, k.out).total.flops, k.flops);
  }
}

// ONNX's LayerNormalization has an optional shift B: without it (nn.LayerNorm(bias=False), Cohere's and OLMo's
// norms) the count is 6E + 2R, not 7E + 2R: 6 x 6 + 2 x 2 = 40 on 2x3, and no shift gradient.
TEST(OpTable, LayerNormWithoutShiftCountsNoShift) {
  const ModelCost with = shaped_cost("layernormalization:2x3,3,3/axis=-1", "2x3");
  const ModelCost without = shaped_cost("layernormalization:2x3,3/axis=-1", "2x3");
  EXPECT_EQ(with.total.flops, 46);
  EXPECT_EQ(without.total.flops, 40);
  EXPECT_EQ(with.nodes[0].cost.bwd_flops() - without.nodes[0].cost.bwd_flops(), 6);  // dB = sum(dy): E
}

TEST(OpTable, OneOperandEinsumMovesOrSums) {
  struct Case {
    const char* desc;
    const char* out;
    int64_t macs, flops;
  };
  // A permutation or a diagonal moves (as Transpose); summing out letters adds in - out (as ReduceSum).
  for (const Case& k : {Case{"einsum:30x40/equation=ij-%3Eji", "40x30", 0, 0},
                        Case{"einsum:30x40/equation=ij-%3Ei", "30", 0, 1200 - 30},
                        Case{"einsum:5x5/equation=ii-%3Ei", "5", 0, 0},
                        Case{"einsum:5x5/equation=ii-%3E", "scalar", 0, 4},
                        Case{"einsum:2x3x4/equation=bij", "2x3x4", 0, 0}}) {
    SCOPED_TRACE(k.desc);
    const ModelCost mc = shaped_cost(k.desc, k.out);
    EXPECT_EQ(mc.total.macs, k.macs);
    EXPECT_EQ(mc.total.flops, k.flops);
    EXPECT_EQ(mc.total.bwd_flops(), 0);
  }
}

TEST(OpTable, SoftmaxBeforeOpset13NormalisesEveryDimFromItsAxis) {
  // coerce_2d (the importer's mark for opsets before 13): 2x3x4 at axis 1 is 2 rows of 12.
  for (const auto& [desc, flops] : {std::pair{"softmax:2x3x4/axis=1/coerce_2d=1", 2 * (5 * 12 - 2)},
                                    std::pair{"softmax:2x3x4/coerce_2d=1", 2 * (5 * 12 - 2)},  // default axis 1
                                    std::pair{"logsoftmax:2x3x4/axis=1/coerce_2d=1", 2 * (5 * 12 - 1)},
                                    std::pair{"softmax:2x3x4/axis=1", 8 * (5 * 3 - 2)}}) {
    SCOPED_TRACE(desc);
    EXPECT_EQ(estimate(graph_from_descriptor(desc, DType::F32)).total.flops, flops);
  }
}

TEST(OpTable, ResizeWithAxesResizesOnlyThoseAxes) {
  // Opset 18: sizes (or scales) for the listed axes only, negative axes allowed; linear: 3 x (2^2 - 1) per output.
  const Graph g = graph_from_descriptor("resize:1x2x5x6,-,-,2=10_12/axes=-2_3/mode=linear", DType::F32);
  EXPECT_EQ(to_string(g.value(g.nodes[0].outputs[0]).shape), "1x2x10x12");
  EXPECT_EQ(estimate(g).total.flops, 2 * 10 * 12 * 9);
  const Graph one = graph_from_descriptor("resize:1x2x5x6,-,-,1=12/axes=3", DType::F32);
  EXPECT_EQ(to_string(one.value(one.nodes[0].outputs[0]).shape), "1x2x5x12");
  EXPECT_THROW(graph_from_descriptor("resize:1x2x5x6,-,-,1=12/axes=2_3", DType::F32), Error);
}

TEST(OpTable, NewerOpsCountTheirVariants) {
  struct Case {
    const char* desc;
    const char* out;
    int64_t flops, bwd;
  };
  for (const Case& k : {
           Case{"lpnormalization:2x3/axis=-1/p=1", "2x3", 3 * 6 - 2, 6 * 6 - 2},  // abs, sums, divides; sign too
           Case{"meanvariancenormalization:2x3x4/axes=2", "2x3x4", 5 * 24 + 4 * 6, 8 * 24},
           Case{"roialign:1x2x6x6,3x4,3@i64/mode=max/sampling_ratio=1", "3x2x1x1", 6 * 9, 6 * 9},
           Case{"gridsample:1x2x4x4,1x3x3x2/mode=nearest", "1x2x3x3", 54, 0},
           // weighted mean over 2 rows: log-softmax 28, negate and weight 4, sum of losses and weights and divide 3
           Case{"softmaxcrossentropyloss:2x3,2@i64,3", "scalar", 35, 16},
           Case{"negativeloglikelihoodloss:2x3x4,2x4@i64/reduction=none", "2x4", 8, 8},
           Case{"maxunpool:1x1x2x2,1x1x2x2@i64,4=1_1_5_5/kernel_shape=2_2/strides=2_2", "1x1x5x5", 0, 0},
           Case{"det:1x1", "scalar", 0, 4},
       }) {
    SCOPED_TRACE(k.desc);
    const ModelCost mc = shaped_cost(k.desc, k.out);
    EXPECT_EQ(mc.total.flops, k.flops);
    EXPECT_EQ(mc.total.bwd_flops(), k.bwd);
  }
  // Where the count depends on tensor values, the op is named and the totals are incomplete.
  for (const char* desc : {"roialign:1x2x6x6,3x4,3@i64", "gridsample:1x2x4x4,1x3x3x2/mode=bicubic"}) {
    SCOPED_TRACE(desc);
    const ModelCost mc = estimate(graph_from_descriptor(desc, DType::F32));
    EXPECT_EQ(mc.nodes[0].status, CostStatus::Unsupported);
    EXPECT_FALSE(mc.complete());
  }
}

TEST(OpTable, NewerOpsRejectMalformedAttributesInOneLine) {
  for (const char* desc : {"lrn:1x4x2x2", "lrn:1x4x2x2/size=0", "lpnormalization:2x3/p=3", "lpnormalization:2x3/axis=2",
                           "meanvariancenormalization:2x3", "meanvariancenormalization:2x3x4/axes=1_1",
                           "lppool:1x1x4x4/kernel_shape=2_2/p=0", "maxunpool:1x1x2x2,1x1x2x2@i64",
                           "gridsample:1x2x4x4,1x3x3x3", "gridsample:1x2x4x4,1x3x3x2/mode=spline",
                           "roialign:1x2x6x6,3x5,3@i64", "roialign:1x2x6x6,3x4,2@i64", "maxroipool:1x2x6x6,3x5",
                           "eyelike:2x3x4", "randomnormal:", "randomuniform:/shape=2_3/dtype=99",
                           "reversesequence:4x2x3,3@i64", "reversesequence:4x2x3,2@i64/time_axis=1",
                           "softmaxcrossentropyloss:2x3,3@i64", "negativeloglikelihoodloss:2x3,2@i64/reduction=max",
                           "bitshift:2x3@uint8,2x3@uint8/direction=UP", "det:2x3x4", "nonzero:2x3", "compress:4x3,2x2@bool",
                           "compress:4x3,4@bool/axis=2", "unique:2x3/axis=2", "nonmaxsuppression:1x6x4,1x1x5",
                           "nonmaxsuppression:1x6x3,1x1x6",
                           "qlinearconv:1x2x5x5@uint8,scalar,scalar@uint8,3x4x3x3@int8,scalar,scalar@int8,scalar,"
                           "scalar@uint8",
                           "qlinearconv:1x2x5x5@uint8,scalar,scalar@uint8,3x2x3x3@int8,2,scalar@int8,scalar,scalar@uint8",
                           "qlinearmatmul:2x3@uint8,scalar,scalar@uint8,4x4@int8,scalar,scalar@int8,scalar,scalar@uint8"}) {
    SCOPED_TRACE(desc);
    try {
      graph_from_descriptor(desc, DType::F32);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST(OpTable, UnknownOpIsNeverCostedAsZero) {
  Graph g;
  Value x;
  x.name = "x";
  x.shape = Shape{{2, 3}};
  x.kind = ValueKind::Input;
  const int in = g.add_value(x);
  g.inputs = {in};
  Value y;
  y.name = "y";
  y.shape = Shape{{2, 3}};
  const int out = g.add_value(y);
  Node n;
  n.name = "nms";
  n.op = OpKind::Unknown;
  n.op_type = "NonMaxSuppression";
  n.inputs = {in};
  n.outputs = {out};
  g.add_node(n);
  g.outputs = {out};
  const ModelCost mc = estimate(g);
  EXPECT_EQ(mc.nodes[0].status, CostStatus::Unsupported);
  EXPECT_NE(mc.nodes[0].reason.find("NonMaxSuppression"), std::string::npos);
  EXPECT_FALSE(mc.complete());
  EXPECT_EQ(mc.excluded_ops.at("NonMaxSuppression"), 1);
}

TEST(OpTable, RecordsDriveRolesModulesAndElementwiseFlops) {
  EXPECT_EQ(input_role(OpKind::Conv, 1), InputRole::Weight);
  EXPECT_EQ(input_role(OpKind::BatchNormalization, 3), InputRole::Statistic);
  EXPECT_EQ(input_role(OpKind::Concat, 7), InputRole::Activation);  // "x*" repeats
  EXPECT_EQ(input_role(OpKind::Relu, 4), InputRole::Activation);    // past the end
  EXPECT_EQ(torch_module(OpKind::Conv, 3, true), "Conv3d");
  EXPECT_EQ(torch_module(OpKind::MatMul, 1, false), "");
  EXPECT_EQ(torch_module(OpKind::MatMul, 1, true), "Linear");
  EXPECT_EQ(torch_module(OpKind::RMSNormalization, 1, true), "RMSNorm");
  for (int i = 0; i < kOpKindCount; ++i) {
    const OpRecord& r = op_record(static_cast<OpKind>(i));
    if (r.family == OpFamily::Unary || r.family == OpFamily::Binary) {
      EXPECT_GT(r.fwd_flops_per_element, 0) << r.name;
    }
    EXPECT_NE(ops::op_rule(r.kind).infer, nullptr) << r.name;
    EXPECT_NE(ops::op_rule(r.kind).cost, nullptr) << r.name;
  }
}

/// Every node of every zoo model, re-created alone from its descriptor, costs what it cost in the model.
TEST(OpTable, EveryZooNodeIsReproducedByItsDescriptor) {
  int models = 0, nodes = 0;
  for (const auto& entry : zoo_entries()) {
    LoadOptions o;
    o.batch = 2;
    if (entry.sequence_input) o.seq_len = 8;
    const Graph g = build_zoo_model(entry.name, o);
    const ModelCost mc = estimate(g);
    for (const NodeCost& nc : mc.nodes) {
      SCOPED_TRACE(entry.name + std::string(" ") + g.nodes[nc.node].name + " " + nc.descriptor);
      ASSERT_EQ(nc.status, CostStatus::Ok);
      // An MoE expert no token is routed to (gpt-oss-120b: 16 tokens x 4 of 128 experts) has zero rows: it does
      // nothing, and a descriptor (whose sizes are positive) cannot state it.
      if (g.value(g.nodes[nc.node].outputs[0]).shape.elements() == 0) {
        EXPECT_EQ(nc.cost.flops, 0);
        continue;
      }
      const Graph one = graph_from_descriptor(nc.descriptor, DType::F32);
      const Cost c = estimate(one).total;
      EXPECT_EQ(c.macs, nc.cost.macs);
      EXPECT_EQ(c.flops, nc.cost.flops);
      EXPECT_EQ(c.bwd_input_flops, nc.cost.bwd_input_flops);
      EXPECT_EQ(c.bwd_weight_flops, nc.cost.bwd_weight_flops);
      EXPECT_EQ(c.bytes_read, nc.cost.bytes_read);
      EXPECT_EQ(c.bytes_written, nc.cost.bytes_written);
      // Shared parameters count at their first use only; a re-created node always owns its parameters.
      if (nc.cost.params > 0) { EXPECT_EQ(c.params, nc.cost.params); }
      ++nodes;
    }
    ++models;
  }
  EXPECT_GE(models, 26);
  EXPECT_GT(nodes, 3000);
}

}  // namespace
}  // namespace ridge
