//===- Layers.h - The built-in Keras layers ---------------------*- C++ -*-===//
//
// Handles with Keras's constructor arguments, in Keras's order and with its
// defaults. Names are assigned per model (dense, dense_1, conv2d, ...) unless
// given with .named(). Implementations live in frontend/layers/, one family
// per file.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_LAYERS_H
#define KCC_FRONTEND_LAYERS_H

#include "frontend/Layer.h"

namespace kcc {

/// A {height, width} pair that also accepts a single int (Keras's
/// `kernel_size=3`).
struct Size2 {
  Size2(int64_t both) : h(both), w(both) {} // NOLINT: implicit as in Keras.
  Size2(int64_t h, int64_t w) : h(h), w(w) {}
  int64_t h, w;
};

/// y = activation(x . kernel + bias), kernel [in, units]. Applies to the
/// last axis of an input of rank >= 2 ([batch, ..., features]), as Keras.
class Dense : public Layer {
public:
  Dense(int64_t units, const std::string &activation = "linear",
        bool useBias = true,
        const std::string &kernelInitializer = "glorot_uniform",
        const std::string &biasInitializer = "zeros");
};

/// NHWC convolution with an HWIO kernel [kh, kw, cin / groups, filters].
/// The second constructor takes Keras's full argument list (dilation_rate
/// and groups before activation); the first leaves both 1.
class Conv2D : public Layer {
public:
  Conv2D(int64_t filters, Size2 kernelSize, Size2 strides = 1,
         const std::string &padding = "valid",
         const std::string &activation = "linear", bool useBias = true,
         const std::string &kernelInitializer = "glorot_uniform",
         const std::string &biasInitializer = "zeros");
  Conv2D(int64_t filters, Size2 kernelSize, Size2 strides,
         const std::string &padding, Size2 dilationRate, int64_t groups,
         const std::string &activation = "linear", bool useBias = true,
         const std::string &kernelInitializer = "glorot_uniform",
         const std::string &biasInitializer = "zeros");
};

/// One filter per input channel (times depth_multiplier M): kernel
/// [kh, kw, cin, M], output channels cin * M (channel c * M + m).
class DepthwiseConv2D : public Layer {
public:
  DepthwiseConv2D(Size2 kernelSize, Size2 strides = 1,
                  const std::string &padding = "valid",
                  int64_t depthMultiplier = 1, Size2 dilationRate = 1,
                  const std::string &activation = "linear", bool useBias = true,
                  const std::string &depthwiseInitializer = "glorot_uniform",
                  const std::string &biasInitializer = "zeros");
};

/// A depthwise convolution (strides, padding and dilation apply to it)
/// followed by a 1x1 one: kernels [kh, kw, cin, M] and [1, 1, cin*M, filters].
class SeparableConv2D : public Layer {
public:
  SeparableConv2D(int64_t filters, Size2 kernelSize, Size2 strides = 1,
                  const std::string &padding = "valid", Size2 dilationRate = 1,
                  int64_t depthMultiplier = 1,
                  const std::string &activation = "linear", bool useBias = true,
                  const std::string &depthwiseInitializer = "glorot_uniform",
                  const std::string &pointwiseInitializer = "glorot_uniform",
                  const std::string &biasInitializer = "zeros");
};

/// The transposed convolution, kernel [kh, kw, filters, cin] as Keras's;
/// output size Keras's with output_padding None (same: in * stride).
class Conv2DTranspose : public Layer {
public:
  Conv2DTranspose(int64_t filters, Size2 kernelSize, Size2 strides = 1,
                  const std::string &padding = "valid", Size2 dilationRate = 1,
                  const std::string &activation = "linear", bool useBias = true,
                  const std::string &kernelInitializer = "glorot_uniform",
                  const std::string &biasInitializer = "zeros");
};

/// The 1-D variants of DepthwiseConv2D, SeparableConv2D and Conv2DTranspose
/// on [batch, steps, channels]: kernels as Keras's 1-D layers hold them
/// (the 2-D ones without the height axis).
class DepthwiseConv1D : public Layer {
public:
  DepthwiseConv1D(int64_t kernelSize, int64_t strides = 1,
                  const std::string &padding = "valid",
                  int64_t depthMultiplier = 1, int64_t dilationRate = 1,
                  const std::string &activation = "linear", bool useBias = true,
                  const std::string &depthwiseInitializer = "glorot_uniform",
                  const std::string &biasInitializer = "zeros");
};

class SeparableConv1D : public Layer {
public:
  SeparableConv1D(int64_t filters, int64_t kernelSize, int64_t strides = 1,
                  const std::string &padding = "valid",
                  int64_t dilationRate = 1, int64_t depthMultiplier = 1,
                  const std::string &activation = "linear", bool useBias = true,
                  const std::string &depthwiseInitializer = "glorot_uniform",
                  const std::string &pointwiseInitializer = "glorot_uniform",
                  const std::string &biasInitializer = "zeros");
};

class Conv1DTranspose : public Layer {
public:
  Conv1DTranspose(int64_t filters, int64_t kernelSize, int64_t strides = 1,
                  const std::string &padding = "valid",
                  int64_t dilationRate = 1,
                  const std::string &activation = "linear", bool useBias = true,
                  const std::string &kernelInitializer = "glorot_uniform",
                  const std::string &biasInitializer = "zeros");
};

/// Strides default to the pool size (Keras's strides=None).
class MaxPooling2D : public Layer {
public:
  MaxPooling2D(Size2 poolSize = 2, std::optional<Size2> strides = std::nullopt,
               const std::string &padding = "valid");
};

class AveragePooling2D : public Layer {
public:
  AveragePooling2D(Size2 poolSize = 2,
                   std::optional<Size2> strides = std::nullopt,
                   const std::string &padding = "valid");
};

/// [batch, ...] -> [batch, prod(...)].
class Flatten : public Layer {
public:
  Flatten();
};

/// [batch, ...] -> [batch, targetShape...]; one dim may be -1.
class Reshape : public Layer {
public:
  explicit Reshape(Shape targetShape);
};

/// When training: keeps x / (1 - rate) where random_uniform(seed, step) >=
/// rate, zero elsewhere. Identity otherwise.
class Dropout : public Layer {
public:
  /// `noiseShape`: the mask's shape, -1 for the input's dim (Keras's
  /// None; empty: the input's shape).
  explicit Dropout(double rate, uint64_t seed = 0,
                   std::vector<int64_t> noiseShape = {});
};

/// x + N(0, stddev) in training (Keras's GaussianNoise).
class GaussianNoise : public Layer {
public:
  explicit GaussianNoise(double stddev, uint64_t seed = 0);
};

/// x * N(1, sqrt(rate / (1 - rate))) in training (Keras's GaussianDropout).
class GaussianDropout : public Layer {
public:
  explicit GaussianDropout(double rate, uint64_t seed = 0);
};

/// Dropout for selu networks (Keras's AlphaDropout): dropped entries take
/// selu's negative saturation, then an affine map keeps the mean and the
/// variance.
class AlphaDropout : public Layer {
public:
  explicit AlphaDropout(double rate, uint64_t seed = 0);
};

/// Dropout of whole channels of [batch, steps, channels]: one draw per
/// (example, channel), kept or dropped at every step.
class SpatialDropout1D : public Layer {
public:
  explicit SpatialDropout1D(double rate, uint64_t seed = 0);
};

/// Dropout of whole channels of [batch, rows, columns, channels].
class SpatialDropout2D : public Layer {
public:
  explicit SpatialDropout2D(double rate, uint64_t seed = 0);
};

/// Dropout of whole channels of [batch, depth, rows, columns, channels].
class SpatialDropout3D : public Layer {
public:
  explicit SpatialDropout3D(double rate, uint64_t seed = 0);
};

/// Any activation ops::activation knows by name (relu, elu, gelu, silu,
/// mish, ...; see ops::activationNames()).
class Activation : public Layer {
public:
  explicit Activation(const std::string &activation);
};

/// Keras's Softmax layer; called on {x, mask}, the mask (any tensor
/// broadcastable to x, kept where over 0.5) masks the entries as Keras's
/// `Softmax()(x, mask=m)` and passes on with the output.
class Softmax : public Layer {
public:
  explicit Softmax(int64_t axis = -1);
};

/// Keras's ReLU layer: keras.activations.relu(x, negative_slope,
/// max_value, threshold). With the defaults, max(x, 0).
class ReLU : public Layer {
public:
  explicit ReLU(std::optional<double> maxValue = std::nullopt,
                double negativeSlope = 0.0, double threshold = 0.0);
};

/// x if x >= 0 else negativeSlope * x (Keras 2 calls the slope alpha).
class LeakyReLU : public Layer {
public:
  explicit LeakyReLU(double negativeSlope = 0.3);
};

/// relu(x) - alpha * relu(-x) with a trainable `alpha` of the input's shape
/// (batch excluded), size 1 along each of `sharedAxes` (1-based as in
/// Keras, 1 = the first non-batch axis).
class PReLU : public Layer {
public:
  explicit PReLU(const std::string &alphaInitializer = "zeros",
                 std::vector<int64_t> sharedAxes = {});
};

/// x if x > 0 else alpha * (exp(x) - 1).
class ELU : public Layer {
public:
  explicit ELU(double alpha = 1.0);
};

/// Sums a list of inputs of one shape (Keras's Add merge layer).
class Add : public Layer {
public:
  Add();
};

/// Joins a list of inputs along `axis` (negative counts from the end; the
/// batch axis 0 cannot be joined); the other dims must match.
class Concatenate : public Layer {
public:
  explicit Concatenate(int64_t axis = -1);
};

/// A tensor and a number combined by `op` ("Add", "Subtract", "Multiply",
/// "Divide"), the number first when `valueFirst` (3.0 - x): what Keras 3
/// saves as a keras.src.ops node for x + 3.0 on a symbolic tensor.
class ScalarArithmetic : public Layer {
public:
  ScalarArithmetic(std::string op, double value, bool valueFirst = false);
};

/// A ScalarArithmetic's number and whether it comes first.
struct ScalarOperand {
  double value;
  bool first;
};
/// The number of a ScalarArithmetic layer (what a saved config writes as
/// the keras.ops node's argument); none for other layers.
std::optional<ScalarOperand> scalarOperandOf(const Layer &layer);

/// The elementwise product of a list of inputs. As in Keras's merge layers,
/// inputs have one rank and each dim equal or 1 (broadcast).
class Multiply : public Layer {
public:
  Multiply();
};

/// inputs[0] - inputs[1]: exactly two inputs.
class Subtract : public Layer {
public:
  Subtract();
};

/// The sum of the inputs divided by their count.
class Average : public Layer {
public:
  Average();
};

/// The elementwise maximum of a list of inputs (NaN propagates).
class Maximum : public Layer {
public:
  Maximum();
};

/// The elementwise minimum of a list of inputs (NaN propagates).
class Minimum : public Layer {
public:
  Minimum();
};

/// The mean over height and width of an NHWC input: [N, C], or [N, 1, 1, C]
/// with `keepdims`.
class GlobalAveragePooling2D : public Layer {
public:
  explicit GlobalAveragePooling2D(bool keepdims = false);
};

/// The maximum over height and width of an NHWC input (NaN propagates).
class GlobalMaxPooling2D : public Layer {
public:
  explicit GlobalMaxPooling2D(bool keepdims = false);
};

/// Keras's AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D:
/// each spatial axis of length L pooled to `outputSize` positions, output
/// i covering [floor(i * L / n), ceil((i + 1) * L / n)) (windows of two
/// sizes, overlapping where n does not divide L). `dataFormat`
/// "channels_last" or "channels_first".
class AdaptivePooling : public Layer {
public:
  AdaptivePooling(bool isMax, std::vector<int64_t> outputSize,
                  const std::string &dataFormat = "channels_last");
};

/// Rows and columns added (ZeroPadding2D) or removed (Cropping2D) at each
/// side of an NHWC image. Accepts Keras's three spellings: `1` (all sides),
/// `{h, w}` (symmetric) and `{{top, bottom}, {left, right}}`.
struct Sides2 {
  Sides2(int64_t all) // NOLINT: implicit as in Keras.
      : top(all), bottom(all), left(all), right(all) {}
  Sides2(int64_t h, int64_t w) : top(h), bottom(h), left(w), right(w) {}
  Sides2(std::pair<int64_t, int64_t> rows, std::pair<int64_t, int64_t> cols)
      : top(rows.first), bottom(rows.second), left(cols.first),
        right(cols.second) {}
  int64_t top, bottom, left, right;
};

/// Pads an NHWC image with zeros.
class ZeroPadding2D : public Layer {
public:
  explicit ZeroPadding2D(Sides2 padding = 1);
};

/// Crops rows and columns off an NHWC image.
class Cropping2D : public Layer {
public:
  explicit Cropping2D(Sides2 cropping = 0);
};

/// Repeats each row `size.h` times and each column `size.w` times
/// (interpolation "nearest", the only one kcc has).
class UpSampling2D : public Layer {
public:
  explicit UpSampling2D(Size2 size = 2,
                        const std::string &interpolation = "nearest");
};

/// Keras's BatchNormalization over the last axis: training normalizes by
/// the batch's mean and biased variance and moves the moving statistics
/// (moving = moving * momentum + batch * (1 - momentum)); inference, or a
/// frozen layer, normalizes by the moving statistics. Weights, in Keras's
/// order: gamma (with `scale`), beta (with `center`), moving_mean and
/// moving_variance (non-trainable). `synchronized`: in a data-parallel step
/// the batch statistics are those of the global batch (kc.all_reduce over
/// the ranks) instead of each rank's own.
class BatchNormalization : public Layer {
public:
  explicit BatchNormalization(
      int64_t axis = -1, double momentum = 0.99, double epsilon = 1e-3,
      bool center = true, bool scale = true,
      const std::string &betaInitializer = "zeros",
      const std::string &gammaInitializer = "ones",
      const std::string &movingMeanInitializer = "zeros",
      const std::string &movingVarianceInitializer = "ones",
      bool synchronized = false);
};

/// Keras's LayerNormalization over the last axis, as Keras 3 computes it:
/// per position, the mean and biased variance of the features normalize,
/// x * inv + (beta - mean * inv) with inv = rsqrt(variance + epsilon) *
/// gamma. With `rmsScaling`, x * rsqrt(variance + epsilon) * gamma (no
/// centring of x, no beta). Weights, in Keras's order: gamma (with `scale`
/// or `rmsScaling`), beta (with `center`, without `rmsScaling`).
class LayerNormalization : public Layer {
public:
  explicit LayerNormalization(int64_t axis = -1, double epsilon = 1e-3,
                              bool center = true, bool scale = true,
                              const std::string &betaInitializer = "zeros",
                              const std::string &gammaInitializer = "ones",
                              bool rmsScaling = false);
};

/// Keras's RMSNormalization: x * rsqrt(mean(x^2 over `axes`) + epsilon) *
/// scale, the scale (ones at first) of the axes' sizes multiplying from
/// the input's last axis.
class RMSNormalization : public Layer {
public:
  explicit RMSNormalization(std::vector<int64_t> axes = {-1},
                            double epsilon = 1e-6);
};

// Sequences (frontend/layers/Sequence.cpp): [batch, steps, channels].

// Attention (frontend/layers/Attention.cpp).

/// Keras's EinsumDense for equations "INPUT,KERNEL->OUTPUT" whose input is
/// free dims then contracted dims, kernel the contracted then output dims
/// and output the free then output dims ("abc,cd->abd", "abc,cde->abde",
/// "abcd,cde->abe"); others are refused. `outputShape` excludes the batch,
/// as Keras's; `biasAxes` (output letters, "" for none) gives a bias of
/// Keras's shape.
class EinsumDense : public Layer {
public:
  EinsumDense(const std::string &equation, const Shape &outputShape,
              const std::string &biasAxes = "",
              const std::string &activation = "linear",
              const std::string &kernelInitializer = "glorot_uniform",
              const std::string &biasInitializer = "zeros");
};

/// ConvNeXt's LayerScale (keras.applications): x * gamma, gamma a
/// [projectionDim] weight initialized to `initValues`.
class LayerScale : public Layer {
public:
  LayerScale(double initValues, int64_t projectionDim);
};

/// ConvNeXt's StochasticDepth: in training each example's input is dropped
/// with probability `dropPathRate`, the others divided by 1 - rate.
class StochasticDepth : public Layer {
public:
  explicit StochasticDepth(double dropPathRate);
};

/// InceptionResNetV2's CustomScaleLayer on {x, r}: x + r * scale.
class CustomScaleLayer : public Layer {
public:
  explicit CustomScaleLayer(double scale);
};

/// Keras's Attention on rank-3 {query, value} or {query, value, key}:
/// softmax(scores) value with scores q k^T ("dot", times a learned scalar
/// when `useScale`) or, for "concat", a learned scalar times
/// sum(tanh(scale * (q + k))); `useCausalMask` as MultiHeadAttention's.
/// No dropout.
class Attention : public Layer {
public:
  explicit Attention(bool useScale = false,
                     const std::string &scoreMode = "dot",
                     bool useCausalMask = false);
};

/// Keras's AdditiveAttention: scores sum(scale * tanh(q + k)) over the
/// features (a learned [features] scale when `useScale`).
class AdditiveAttention : public Layer {
public:
  explicit AdditiveAttention(bool useScale = true, bool useCausalMask = false);
};

/// Keras's MultiHeadAttention on rank-3 inputs, called on {query, value},
/// {query, value, key} or {query, value, key, attention_mask}:
/// softmax(q k^T / sqrt(keyDim)) v per head, with Keras's causal mask when
/// `useCausalMask` (a call argument in Keras, a property of the layer
/// here). The attention mask ([batch, T, S], or broadcastable to it;
/// nonzero where a query step may attend to a key step) is ANDed with the
/// inputs' masks (Tensor::mask) and the causal mask, as Keras's
/// _compute_attention_mask. `valueDim` 0 means keyDim; an empty
/// `outputShape` means the query's features. `useGate`: the heads' outputs
/// times sigmoid of another projection of the query (gate/kernel [E, H,
/// valueDim]) before the output projection; `slidingWindow` > 0: a query
/// step sees key steps within slidingWindow - 1 of it (ANDed with the
/// causal mask). No dropout. Weights, as Keras names them: query/kernel
/// [E, H, keyDim] and query/bias [H, keyDim], key/..., gate/...,
/// value/... [E, H, valueDim], attention_output/kernel [H, valueDim,
/// out...] and its bias [out...].
class MultiHeadAttention : public Layer {
public:
  MultiHeadAttention(int64_t numHeads, int64_t keyDim, int64_t valueDim = 0,
                     bool useBias = true, const Shape &outputShape = {},
                     bool useCausalMask = false,
                     const std::string &kernelInitializer = "glorot_uniform",
                     const std::string &biasInitializer = "zeros",
                     bool useGate = false, int64_t slidingWindow = 0);
};

/// Keras's GroupQueryAttention (the class GroupedQueryAttention in its source):
/// MultiHeadAttention with `numQueryHeads` query heads of `headDim` and
/// `numKeyValueHeads` key and value heads (a divisor of numQueryHeads),
/// each shared by numQueryHeads / numKeyValueHeads consecutive query
/// heads; the output has the query's features. Same call, masks, gate,
/// window and weight names as MultiHeadAttention, the key and value
/// kernels [E, numKeyValueHeads, headDim].
class GroupQueryAttention : public Layer {
public:
  GroupQueryAttention(int64_t headDim, int64_t numQueryHeads,
                      int64_t numKeyValueHeads, bool useBias = true,
                      bool useCausalMask = false, bool useGate = false,
                      int64_t slidingWindow = 0,
                      const std::string &kernelInitializer = "glorot_uniform",
                      const std::string &biasInitializer = "zeros");
};

/// Whether a Keras class takes MultiHeadAttention's call (query, value,
/// key, attention_mask, use_causal_mask) and builds from its named shapes.
bool isMultiHeadAttentionClass(const std::string &className);

/// Whether `layer` is a MultiHeadAttention, Attention or AdditiveAttention
/// applying the causal mask (what a saved config records as the call's
/// use_causal_mask).
bool usesCausalMask(const Layer &layer);

/// Rows of a trainable [inputDim, outputDim] table at integer ids (int32 or
/// int64 inputs; other dtypes are cast to int32 as Keras does). Ids in
/// [-inputDim, 0) count from the end, others outside [0, inputDim) give NaN
/// rows (JAX's take). With `maskZero` (Keras's mask_zero), id 0 is padding:
/// the output's mask (Tensor::mask) is ids != 0.
class Embedding : public Layer {
public:
  Embedding(int64_t inputDim, int64_t outputDim,
            const std::string &embeddingsInitializer = "uniform",
            bool maskZero = false);
};

/// The recurrent layers take [batch, steps, features] and run their cell
/// over the steps as one kc.recurrence (a loop over time when compiled,
/// whose gradient is the reverse loop); the input projection x.W + b of
/// every step is one GEMM before it. Weights as Keras names and lays them
/// out: cell/kernel [features, G*units], cell/recurrent_kernel
/// [units, G*units], cell/bias, with Keras's gate order (LSTM i, f, c, o;
/// GRU z, r, h). Activations: tanh, sigmoid, relu, linear, hard_sigmoid.
/// The output is the last step's h, or every step's ([batch, steps, units],
/// in processing order when going backwards) with `returnSequences`;
/// `returnState` adds the final h (and LSTM's final c) as further outputs.
/// Initial states are zeros; dropout and stateful layers are not
/// supported. On a masked input (Tensor::mask) a masked step keeps the
/// previous state and outputs the previous output (Keras's rnn), one
/// kc.recurrence per step; a sequence output keeps the mask.
struct RecurrentOptions {
  bool returnSequences = false;
  bool returnState = false;
  bool goBackwards = false;
};

/// LSTM; bias [4*units] (with Keras's unit_forget_bias, ones on the
/// forget gate at initialization).
class LSTM : public Layer {
public:
  LSTM(int64_t units, const std::string &activation = "tanh",
       const std::string &recurrentActivation = "sigmoid", bool useBias = true,
       const std::string &kernelInitializer = "glorot_uniform",
       const std::string &recurrentInitializer = "orthogonal",
       const std::string &biasInitializer = "zeros", bool unitForgetBias = true,
       RecurrentOptions options = {});
};

/// Keras's ConvLSTM1D/2D/3D: an LSTM whose products are convolutions of
/// the layer's rank over [batch, steps, spatial..., channels] inputs.
/// kernel_size, strides and dilation_rate have one entry per spatial axis;
/// the recurrent convolution is `same` with unit strides. Weights:
/// cell/kernel [k..., channels, 4 * filters], cell/recurrent_kernel [k...,
/// filters, 4 * filters], cell/bias [4 * filters] (gates i, f, c, o).
struct ConvLSTMOptions {
  int64_t filters = 0;
  std::vector<int64_t> kernelSize, strides, dilationRate;
  std::string padding = "valid";
  std::string activation = "tanh", recurrentActivation = "sigmoid";
  bool useBias = true;
  std::string kernelInitializer = "glorot_uniform",
              recurrentInitializer = "orthogonal", biasInitializer = "zeros";
  bool unitForgetBias = true;
  RecurrentOptions options;
};
class ConvLSTM1D : public Layer {
public:
  explicit ConvLSTM1D(ConvLSTMOptions options);
};
class ConvLSTM2D : public Layer {
public:
  explicit ConvLSTM2D(ConvLSTMOptions options);
};
class ConvLSTM3D : public Layer {
public:
  explicit ConvLSTM3D(ConvLSTMOptions options);
};

/// GRU; with `resetAfter` (Keras 3's default) the bias is [2, 3*units]:
/// the input bias, then the recurrent bias applied before the reset gate
/// multiplies; without it, [3*units] and the reset gate scales h before
/// the candidate's recurrent product.
class GRU : public Layer {
public:
  GRU(int64_t units, const std::string &activation = "tanh",
      const std::string &recurrentActivation = "sigmoid", bool useBias = true,
      const std::string &kernelInitializer = "glorot_uniform",
      const std::string &recurrentInitializer = "orthogonal",
      const std::string &biasInitializer = "zeros",
      RecurrentOptions options = {}, bool resetAfter = true);
};

/// SimpleRNN: h = activation(x.W + h.U + b); bias [units].
class SimpleRNN : public Layer {
public:
  SimpleRNN(int64_t units, const std::string &activation = "tanh",
            bool useBias = true,
            const std::string &kernelInitializer = "glorot_uniform",
            const std::string &recurrentInitializer = "orthogonal",
            const std::string &biasInitializer = "zeros",
            RecurrentOptions options = {});
};

/// Runs `layer` (an LSTM, GRU or SimpleRNN) forwards and a copy of it
/// backwards and merges their outputs: merge_mode "concat" (forward then
/// backward on the last axis), "sum", "mul", "ave". With return_sequences
/// the backward outputs are put back in time order first, as Keras does.
/// Weights: forward_layer/cell/... then backward_layer/cell/...; with
/// return_state the outputs are the merged output, then the forward
/// layer's states, then the backward layer's.
class Bidirectional : public Layer {
public:
  explicit Bidirectional(const Layer &layer,
                         const std::string &mergeMode = "concat");
};

/// Keras's RNN around cells: `cells` are LSTM, GRU or SimpleRNN layers
/// giving each cell's units, activations, bias and initializers (their own
/// return and direction options are ignored: `options` are the RNN's). One
/// cell is RNN(LSTMCell(...)); several, or `stacked`, are a StackedRNNCells,
/// each cell reading the previous one's output at every step. Outputs: the
/// last cell's output, then with return_state every cell's states in cell
/// order; `zeroOutputForMask` zeros the outputs of masked steps (Keras's
/// zero_output_for_mask) where the previous output is kept otherwise.
class RNN : public Layer {
public:
  explicit RNN(const std::vector<Layer> &cells, RecurrentOptions options = {},
               bool zeroOutputForMask = false, bool stacked = false);
};

/// 1-D convolution, kernel [kernelSize, channels, filters]; padding
/// "valid", "same" or "causal" (zeros before the steps only).
class Conv1D : public Layer {
public:
  Conv1D(int64_t filters, int64_t kernelSize, int64_t strides = 1,
         const std::string &padding = "valid", int64_t dilationRate = 1,
         const std::string &activation = "linear", bool useBias = true,
         const std::string &kernelInitializer = "glorot_uniform",
         const std::string &biasInitializer = "zeros");
};

/// Strides default to the pool size (Keras's strides=None).
class MaxPooling1D : public Layer {
public:
  MaxPooling1D(int64_t poolSize = 2,
               std::optional<int64_t> strides = std::nullopt,
               const std::string &padding = "valid");
};
class AveragePooling1D : public Layer {
public:
  AveragePooling1D(int64_t poolSize = 2,
                   std::optional<int64_t> strides = std::nullopt,
                   const std::string &padding = "valid");
};

/// The mean over the steps: [N, C], or [N, 1, C] with `keepdims`; over the
/// real steps when the input carries a mask.
class GlobalAveragePooling1D : public Layer {
public:
  explicit GlobalAveragePooling1D(bool keepdims = false);
};
/// The maximum over the steps (NaN propagates).
class GlobalMaxPooling1D : public Layer {
public:
  explicit GlobalMaxPooling1D(bool keepdims = false);
};

/// Zeros added before and after the steps.
class ZeroPadding1D : public Layer {
public:
  explicit ZeroPadding1D(int64_t padding = 1);
  ZeroPadding1D(int64_t before, int64_t after);
};

/// Repeats each step `size` times.
class UpSampling1D : public Layer {
public:
  explicit UpSampling1D(int64_t size = 2);
};

/// Steps cropped from the start and the end of [batch, steps, channels].
class Cropping1D : public Layer {
public:
  explicit Cropping1D(int64_t cropping = 1);
  Cropping1D(int64_t before, int64_t after);
};

//===----------------------------------------------------------------------===//
// Shape, preprocessing and regularization layers without weights
//===----------------------------------------------------------------------===//

/// Its input, unchanged (Keras's Identity).
class Identity : public Layer {
public:
  Identity();
};

/// Keras's Masking: a step whose every feature equals `maskValue` is set to
/// zeros and masked (Tensor::mask) for the layers after it.
class Masking : public Layer {
public:
  explicit Masking(double maskValue = 0.0);
};

/// Keras's CategoryEncoding of integer ids into [0, numTokens):
/// "one_hot" (ids [batch] or [batch, 1] -> [batch, numTokens]; other
/// shapes get a last axis), "multi_hot" and "count" (ids [batch, features]
/// -> [batch, numTokens], whether or how often each id occurs). Ids
/// outside the range encode to zeros.
class CategoryEncoding : public Layer {
public:
  explicit CategoryEncoding(int64_t numTokens,
                            const std::string &outputMode = "multi_hot");
};

/// Keras's Discretization with given bin boundaries (sorted): each value's
/// bucket, the number of boundaries at or below it, as int32 ("int"), or
/// encoded as CategoryEncoding encodes ids ("one_hot", "multi_hot",
/// "count") with boundaries + 1 tokens.
class Discretization : public Layer {
public:
  explicit Discretization(std::vector<double> binBoundaries,
                          const std::string &outputMode = "int");
};

/// x * scale + offset (Keras's Rescaling): each a scalar, or one value per
/// entry of the last axis (Keras broadcasts a list against the input's
/// trailing axis).
class Rescaling : public Layer {
public:
  explicit Rescaling(std::vector<double> scale,
                     std::vector<double> offset = {0.0});
};

/// Statistics given to Normalization instead of adapted weights: `shape`
/// aligned with the kept axes from the right (Keras's rule), row-major
/// values. Empty: adapted.
struct NormalizationStatistics {
  Shape shape;
  std::vector<double> mean, variance;
};

/// (x - mean) / max(sqrt(variance), 1e-7) with the statistics per entry of
/// the kept `axis` (Keras's Normalization; an empty `axis` keeps none), or
/// with `invert` mean + x * max(sqrt(variance), 1e-7). Adapted statistics
/// are non-trainable weights (mean, variance and the adapt count, as Keras
/// stores them); given ones are constants of the step.
class Normalization : public Layer {
public:
  explicit Normalization(std::vector<int64_t> axis = {-1},
                         NormalizationStatistics statistics = {},
                         bool invert = false);
};

/// NHWC images resized to height x width (Keras's Resizing, as the JAX
/// backend computes it without antialiasing): "bilinear" or "nearest";
/// `cropToAspectRatio` first takes the largest centred crop of the
/// target's aspect ratio.
class Resizing : public Layer {
public:
  Resizing(int64_t height, int64_t width,
           std::string interpolation = "bilinear",
           bool cropToAspectRatio = false);
};

/// The centred height x width window of NHWC images; an image smaller than
/// that is cropped to its aspect ratio and resized (Keras's CenterCrop).
class CenterCrop : public Layer {
public:
  CenterCrop(int64_t height, int64_t width);
};

/// Keras's augmentation layers: the identity at inference; in training one
/// draw per image from the step's counter-based stream (seed 0: one derived
/// from the model's seed and the layer's name). RandomFlip flips images
/// whose draw is <= 0.5 along the width ("horizontal"), the height
/// ("vertical") or both.
class RandomFlip : public Layer {
public:
  explicit RandomFlip(std::string mode = "horizontal_and_vertical",
                      uint64_t seed = 0);
};

/// Adds uniform(lower, upper) * (high - low) to each image, clipped to
/// [low, high] (Keras's RandomBrightness; its factor's (lower, upper)).
class RandomBrightness : public Layer {
public:
  RandomBrightness(double lower, double upper, double low = 0.0,
                   double high = 255.0, uint64_t seed = 0);
};

/// Scales each image's deviation from its per-channel mean by
/// uniform(1 - lower, 1 + upper), clipped to [low, high] (Keras's
/// RandomContrast; its factor's (lower, upper)).
class RandomContrast : public Layer {
public:
  RandomContrast(double lower, double upper, double low = 0.0,
                 double high = 255.0, uint64_t seed = 0);
};

/// Replaces each RGB image, with probability `factor`, by its grayscale
/// (0.2989 R + 0.587 G + 0.114 B) in all three channels (Keras's
/// RandomGrayscale; one channel passes through).
class RandomGrayscale : public Layer {
public:
  explicit RandomGrayscale(double factor = 0.5, uint64_t seed = 0);
};

/// Keras's RandomColorDegeneration: each image blended toward its
/// grayscale, x + f * (luma - x) with f = uniform(lower, upper) drawn per
/// image (Keras's factor f gives (-f, f)), clipped to [low, high]; 1 or 3
/// channels.
class RandomColorDegeneration : public Layer {
public:
  RandomColorDegeneration(double lower, double upper, double low = 0.0,
                          double high = 255.0, uint64_t seed = 0);
};

/// Keras's RandomSaturation: each RGB image's HSV saturation times f / (1
/// - f + 1e-7), f = uniform(lower, upper) per image (0.5 keeps it, 0
/// grays, 1 saturates; Keras's factor f gives (-f, f)), clipped to [low,
/// high] as Keras clips it.
class RandomSaturation : public Layer {
public:
  RandomSaturation(double lower, double upper, double low = 0.0,
                   double high = 255.0, uint64_t seed = 0);
};

/// Keras's RandomHue: each RGB image's HSV hue (on the [0, 1] scale of
/// [low, high]) moved by uniform(lower, upper) / 2 with a random sign,
/// wrapped around, back to RGB clipped to the range (Keras's factor f gives
/// (0, f)).
class RandomHue : public Layer {
public:
  RandomHue(double lower, double upper, double low = 0.0, double high = 255.0,
            uint64_t seed = 0);
};

/// RandomColorJitter's parts: each factor's (lower, upper) as its own
/// layer takes it; an absent one skips that part.
struct ColorJitterFactors {
  std::optional<std::pair<double, double>> brightness, contrast, saturation,
      hue;
};

/// Keras's RandomColorJitter: RandomBrightness, RandomContrast,
/// RandomSaturation and RandomHue in that order, on one value range [low,
/// high], each with draws of its own.
class RandomColorJitter : public Layer {
public:
  explicit RandomColorJitter(ColorJitterFactors factors, double low = 0.0,
                             double high = 255.0, uint64_t seed = 0);
};

/// Keras's RandomPosterization: on the [0, 255] scale of [low, high], each
/// image's values keep their top `bits` bits (floor(x / 2^(8 - bits)) *
/// 2^(8 - bits)), bits drawn per image in [lower, upper) as Keras's randint
/// (lower when they are equal); Keras's factor f gives (1, f).
class RandomPosterization : public Layer {
public:
  RandomPosterization(int64_t lower, int64_t upper, double low = 0.0,
                      double high = 255.0, uint64_t seed = 0);
};

/// Replaces each image by high - x when uniform(0, 1) < uniform(lower,
/// upper) (Keras's RandomInvert and its factor's (lower, upper)).
class RandomInvert : public Layer {
public:
  RandomInvert(double lower, double upper, double low = 0.0,
               double high = 255.0, uint64_t seed = 0);
};

/// Keras's Solarization: on the [0, 255] scale of [low, high], each
/// image plus an addition drawn from (factor.first, factor.second * 255),
/// clipped, then 255 minus the values at or above a threshold drawn the
/// same way from `thresholdFactor` (so the default (0, 0) inverts every
/// image).
class Solarization : public Layer {
public:
  explicit Solarization(std::pair<double, double> additionFactor = {0, 0},
                        std::pair<double, double> thresholdFactor = {0, 0},
                        double low = 0.0, double high = 255.0,
                        uint64_t seed = 0);
};

/// Keras's AutoContrast: each image's channels stretched linearly so that
/// their minimum is `low` and maximum `high` (a constant channel kept);
/// not random, applied at inference too.
class AutoContrast : public Layer {
public:
  explicit AutoContrast(double low = 0.0, double high = 255.0);
};

/// Keras's RandomSharpness: x + (1 - 2 f) * (blur - x) with f =
/// uniform(lower, upper) per image (0.5 keeps the image, 0 blurs, 1
/// sharpens) and blur a 3x3 smoothing [1 1 1; 1 5 1; 1 1 1] / 13 with zero
/// padding, clipped to [low, high] (Keras's factor f gives (0, f)).
class RandomSharpness : public Layer {
public:
  RandomSharpness(double lower, double upper, double low = 0.0,
                  double high = 255.0, uint64_t seed = 0);
};

/// Keras's RandomGaussianBlur: each image, with probability
/// uniform(factor), replaced by its blur with a Gaussian kernel of
/// kernelSize (width, height) taps whose sigmas (width, height) are drawn
/// uniform(sigma) + 1e-6 once per batch, zero padding; the batch clipped
/// to [low, high]. Keras's sizes must be odd.
class RandomGaussianBlur : public Layer {
public:
  explicit RandomGaussianBlur(std::pair<double, double> factor = {0, 1},
                              std::pair<int64_t, int64_t> kernelSize = {3, 3},
                              std::pair<double, double> sigma = {0, 1},
                              double low = 0.0, double high = 255.0,
                              uint64_t seed = 0);
};

/// Keras's RandomErasing: with probability uniform(factor) per image, a
/// box whose sides are sqrt(uniform(scale)) of the width and the height, at
/// a uniform place, filled with `fillValue` (one number, or one per RGB
/// channel; empty: normal noise times `high`), clipped to [low, high].
class RandomErasing : public Layer {
public:
  explicit RandomErasing(std::pair<double, double> factor = {0, 1},
                         std::pair<double, double> scale = {0.02, 0.33},
                         std::vector<double> fillValue = {}, double low = 0.0,
                         double high = 255.0, uint64_t seed = 0);
};

/// How Keras's geometric augmentations sample (their fill_mode: reflect,
/// wrap, constant, nearest; interpolation: bilinear, nearest; fill_value
/// for constant).
struct ImageFill {
  std::string fillMode = "reflect";
  std::string interpolation = "bilinear";
  double fillValue = 0.0;
};

/// Rotates each image about its centre by uniform(lower, upper) turns
/// (Keras's RandomRotation; its factor's (lower, upper), in [-1, 1]
/// fractions of 2 pi, counter-clockwise positive).
class RandomRotation : public Layer {
public:
  RandomRotation(double lower, double upper, ImageFill fill = {},
                 uint64_t seed = 0);
};

/// Zooms each image about its centre: the height by 1 + uniform(heightLower,
/// heightUpper), the width by its own factor, or by the height's draw when
/// `width` is empty (Keras's RandomZoom; factors in (-1, 1], positive
/// zooms out).
class RandomZoom : public Layer {
public:
  RandomZoom(double heightLower, double heightUpper,
             std::optional<std::pair<double, double>> width = std::nullopt,
             ImageFill fill = {}, uint64_t seed = 0);
};

/// Shifts each image by uniform(heightLower, heightUpper) of its height
/// down and uniform(widthLower, widthUpper) of its width right (Keras's
/// RandomTranslation; factors in [-1, 1]).
class RandomTranslation : public Layer {
public:
  RandomTranslation(double heightLower, double heightUpper, double widthLower,
                    double widthUpper, ImageFill fill = {}, uint64_t seed = 0);
};

/// Keras's RandomShear: each output pixel (x, y) samples the input at (x +
/// sx * y, sy * x + y), sx and sy uniform over their factors with one sign
/// per image for both (Keras's factor f gives (-f, f); entries in [-1,
/// 1]).
class RandomShear : public Layer {
public:
  RandomShear(std::pair<double, double> xFactor,
              std::pair<double, double> yFactor, ImageFill fill = {},
              uint64_t seed = 0);
};

/// Keras 3's RandomCrop: in training, a window of height x width at one
/// random offset for the whole batch when the images are larger along both
/// axes, else the largest centred crop of that aspect ratio resized
/// (bilinear) to height x width; at inference the identity (Keras 3 returns
/// the images as they are, whatever their size).
class RandomCrop : public Layer {
public:
  RandomCrop(int64_t height, int64_t width, uint64_t seed = 0);
};

/// The non-batch axes permuted: `dims` lists, 1-based, which input axis
/// each output axis is (Keras's Permute).
class Permute : public Layer {
public:
  explicit Permute(std::vector<int64_t> dims);
};

/// The dot products of two inputs' examples over one axis of each (Keras's
/// Dot, batch_dot): [N, F] . [N, F] -> [N, 1]; rank-3 inputs contract
/// axes (a, b) in {1, 2} into [N, the rest of x1, the rest of x2].
/// `normalize` first scales each input to unit L2 norm along its axis.
class Dot : public Layer {
public:
  explicit Dot(int64_t axes, bool normalize = false);
  Dot(int64_t axis1, int64_t axis2, bool normalize = false);
};

/// [batch, features] -> [batch, n, features] (Keras's RepeatVector).
class RepeatVector : public Layer {
public:
  explicit RepeatVector(int64_t n);
};

/// Keras's GroupNormalization over the last axis: the channels in `groups`
/// groups (-1: one per channel), each example's group normalized by its
/// own mean and variance, then gamma and beta per channel.
class GroupNormalization : public Layer {
public:
  explicit GroupNormalization(int64_t groups = 32, int64_t axis = -1,
                              double epsilon = 1e-3, bool center = true,
                              bool scale = true,
                              const std::string &betaInitializer = "zeros",
                              const std::string &gammaInitializer = "ones");
};

/// x scaled to unit L2 norm over `axes` (Keras's UnitNormalization:
/// x * min(rsqrt(sum x^2), 1e12)).
class UnitNormalization : public Layer {
public:
  explicit UnitNormalization(std::vector<int64_t> axes = {-1});
};

/// Its input, with l1 * sum|x| + l2 * sum x^2 of it added to the training
/// loss as an activity regularizer (Keras's ActivityRegularization).
class ActivityRegularization : public Layer {
public:
  explicit ActivityRegularization(double l1 = 0.0, double l2 = 0.0);
};

} // namespace kcc

#include "frontend/VolumeLayers.h"

#endif // KCC_FRONTEND_LAYERS_H
