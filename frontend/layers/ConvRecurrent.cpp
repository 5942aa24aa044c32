//===- ConvRecurrent.cpp - ConvLSTM1D, ConvLSTM2D, ConvLSTM3D -------------===//
//
// Keras's ConvLSTM: an LSTM whose products are convolutions. The input
// convolution of every step is one convolution of all steps at once (the
// batch and the steps folded together, its four gates' kernels one kernel of
// 4 * filters outputs, which is Keras's four convolutions side by side); the
// recurrence is unrolled over the steps (static in a Keras model), each step
// a `same` convolution of the previous h (skipped at the first step, where h
// is zero) and the cell's elementwise math, so autodiff, fusion and both
// execution modes take it as any other traced ops. 1-D and 3-D run as the
// 2-D and 3-D convolutions do (a unit height; ops::conv3d).
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Ops.h"

using namespace kcc;

namespace {

class ConvLSTMImpl : public LayerImpl {
public:
  ConvLSTMImpl(int rank, ConvLSTMOptions o)
      : LayerImpl("ConvLSTM" + std::to_string(rank) + "D"), rank_(rank),
        o_(std::move(o)) {
    auto bad = [&](const std::string &m) {
      throw Error(className() + ": " + m);
    };
    if (o_.filters <= 0)
      bad("filters must be positive, got " + std::to_string(o_.filters));
    auto positive = [&](const std::vector<int64_t> &v, const char *what) {
      if (static_cast<int>(v.size()) != rank_)
        bad(std::string(what) + " needs " + std::to_string(rank_) +
            " entries, got " + std::to_string(v.size()));
      for (int64_t e : v)
        if (e <= 0)
          bad(std::string(what) + " must be positive, got " + shapeToString(v));
    };
    positive(o_.kernelSize, "kernel_size");
    positive(o_.strides, "strides");
    positive(o_.dilationRate, "dilation_rate");
    auto above1 = [](const std::vector<int64_t> &v) {
      return *std::max_element(v.begin(), v.end()) > 1;
    };
    if (above1(o_.strides) && above1(o_.dilationRate))
      bad("strides > 1 and dilation_rate > 1 together are not supported "
          "(Keras refuses them too)");
    if (o_.padding != "valid" && o_.padding != "same")
      bad("padding must be \"valid\" or \"same\", got \"" + o_.padding + "\"");
    for (const std::string &a : {o_.activation, o_.recurrentActivation})
      if (!ops::isActivation(a) || a == "softmax" || a == "log_softmax")
        bad("activation '" + a + "' is not supported in a ConvLSTM cell");
  }

  llvm::json::Object kerasConfig() const override {
    auto tuple = [](const std::vector<int64_t> &v) {
      llvm::json::Array a;
      for (int64_t e : v)
        a.push_back(e);
      return a;
    };
    return llvm::json::Object{
        {"filters", o_.filters},
        {"kernel_size", tuple(o_.kernelSize)},
        {"strides", tuple(o_.strides)},
        {"padding", o_.padding},
        {"data_format", "channels_last"},
        {"dilation_rate", tuple(o_.dilationRate)},
        {"activation", o_.activation},
        {"recurrent_activation", o_.recurrentActivation},
        {"use_bias", o_.useBias},
        {"kernel_initializer", o_.kernelInitializer},
        {"recurrent_initializer", o_.recurrentInitializer},
        {"bias_initializer", o_.biasInitializer},
        {"unit_forget_bias", o_.unitForgetBias},
        {"dropout", 0.0},
        {"recurrent_dropout", 0.0},
        {"return_sequences", o_.options.returnSequences},
        {"return_state", o_.options.returnState},
        {"go_backwards", o_.options.goBackwards},
        {"stateful", false},
        {"unroll", false}};
  }

  /// Keras's ConvLSTM keeps the state over masked steps; kcc does not
  /// model that here, so a masked input is an error naming the layer.
  MaskRule maskRule() const override { return MaskRule::Refuse; }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || static_cast<int>(shapes[0].size()) != rank_ + 3)
      fail(
          "expects one input of rank " + std::to_string(rank_ + 3) +
          " ([batch, steps, " +
          (rank_ == 1   ? "width"
           : rank_ == 2 ? "height, width"
                        : "depth, height, width") +
          ", channels])" +
          (shapes.empty() ? std::string() : ", got " + shapeString(shapes[0])));
    int64_t channels = shapes[0].back();
    int64_t gates = 4 * o_.filters;
    Shape kernel(o_.kernelSize.begin(), o_.kernelSize.end());
    Shape recurrent = kernel;
    kernel.push_back(channels);
    kernel.push_back(gates);
    recurrent.push_back(o_.filters);
    recurrent.push_back(gates);
    addWeight("cell/kernel", kernel, o_.kernelInitializer);
    addWeight("cell/recurrent_kernel", recurrent, o_.recurrentInitializer);
    if (o_.useBias) {
      // Keras's cell: ones on the forget gate, bias_initializer around.
      std::string init = o_.biasInitializer;
      if (o_.unitForgetBias)
        init = init == "zeros" ? "unit_forget_bias"
                               : "unit_forget_bias(" + init + ")";
      addWeight("cell/bias", {gates}, init);
    }
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    expectInputs(inputs, 1);
    const Tensor &x = inputs[0];
    int64_t batch = x.dim(0), steps = x.dim(1);
    if (steps == 0)
      fail("expects at least one step, got " + x.shapeString());
    int64_t F = o_.filters;
    // Every step's input convolution at once: [batch * steps, ...].
    Shape folded(x.shape().begin() + 1, x.shape().end());
    folded[0] = batch * steps;
    Tensor proj = conv(ops::reshape(x, folded), weight(0), o_.strides,
                       o_.padding, o_.dilationRate);
    if (o_.useBias)
      proj = ops::add(proj, weight(2));
    Shape stepShape = proj.shape(); // [batch * steps, spatial..., 4F]
    stepShape[0] = batch;
    Shape unfolded = stepShape;
    unfolded.insert(unfolded.begin() + 1, steps);
    proj = ops::reshape(proj, unfolded);
    Shape stateShape = stepShape;
    stateShape.back() = F;

    std::vector<int64_t> ones(rank_, 1);
    Tensor h, c;
    std::vector<Tensor> outputs;
    for (int64_t s = 0; s < steps; ++s) {
      int64_t t = o_.options.goBackwards ? steps - 1 - s : s;
      std::vector<int64_t> start(unfolded.size(), 0), limit = unfolded;
      start[1] = t;
      limit[1] = t + 1;
      Tensor z =
          ops::reshape(ops::slice(proj, start, limit,
                                  std::vector<int64_t>(unfolded.size(), 1)),
                       stepShape);
      if (s > 0)
        z = ops::add(z, conv(h, weight(1), ones, "same", ones));
      auto gate = [&](int64_t g) {
        std::vector<int64_t> from(stepShape.size(), 0), to = stepShape;
        from.back() = g * F;
        to.back() = (g + 1) * F;
        return ops::slice(z, from, to,
                          std::vector<int64_t>(stepShape.size(), 1));
      };
      Tensor i = ops::activation(gate(0), o_.recurrentActivation);
      Tensor f = ops::activation(gate(1), o_.recurrentActivation);
      Tensor candidate = ops::mul(i, ops::activation(gate(2), o_.activation));
      c = s == 0 ? candidate : ops::add(ops::mul(f, c), candidate);
      Tensor o = ops::activation(gate(3), o_.recurrentActivation);
      h = ops::mul(o, ops::activation(c, o_.activation));
      if (o_.options.returnSequences) {
        Shape one = stateShape;
        one.insert(one.begin() + 1, 1);
        outputs.push_back(ops::reshape(h, one));
      }
    }
    Tensor out = o_.options.returnSequences ? ops::concat(outputs, 1) : h;
    if (o_.options.returnState)
      return {out, h, c};
    return {out};
  }

private:
  /// The convolution of the layer's rank, channels last.
  Tensor conv(const Tensor &x, const Tensor &kernel,
              const std::vector<int64_t> &strides, const std::string &padding,
              const std::vector<int64_t> &dilation) const {
    ops::Padding p =
        padding == "same" ? ops::Padding::Same : ops::Padding::Valid;
    if (rank_ == 3)
      return ops::conv3d(x, kernel, strides, p, dilation);
    if (rank_ == 2)
      return ops::conv2d(x, kernel, strides, p, dilation);
    // 1-D: a unit height.
    Tensor y = ops::conv2d(
        ops::reshape(x, {x.dim(0), 1, x.dim(1), x.dim(2)}),
        ops::reshape(kernel, {1, kernel.dim(0), kernel.dim(1), kernel.dim(2)}),
        {1, strides[0]}, p, {1, dilation[0]});
    return ops::reshape(y, {y.dim(0), y.dim(2), y.dim(3)});
  }

  int rank_;
  ConvLSTMOptions o_;
};

} // namespace

ConvLSTM1D::ConvLSTM1D(ConvLSTMOptions options)
    : Layer(std::make_shared<ConvLSTMImpl>(1, std::move(options))) {}
ConvLSTM2D::ConvLSTM2D(ConvLSTMOptions options)
    : Layer(std::make_shared<ConvLSTMImpl>(2, std::move(options))) {}
ConvLSTM3D::ConvLSTM3D(ConvLSTMOptions options)
    : Layer(std::make_shared<ConvLSTMImpl>(3, std::move(options))) {}
