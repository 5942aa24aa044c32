//===- Recurrent.cpp - LSTM, GRU, SimpleRNN and Bidirectional -------------===//
//
// Each layer is three steps: the input projection of every step as one
// GEMM ([steps * batch, features] x kernel, time-major), one
// kc.recurrence over the steps, and slices of its states for the outputs.
// Bidirectional runs the same function twice, the second time going
// backwards, and merges.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/Masks.h"
#include "frontend/Ops.h"
#include "runtime/kernels/Recurrence.h"

#include "llvm/ADT/StringMap.h"

#include <functional>

using namespace kcc;

namespace {

/// Everything a recurrent layer's Keras config says.
struct RecurrentConfig {
  std::string className; ///< "LSTM", "GRU", "SimpleRNN"
  kernels::RecurrentCell cell = kernels::RecurrentCell::Lstm;
  int64_t units = 0;
  std::string activation = "tanh", recurrentActivation = "sigmoid";
  bool useBias = true;
  std::string kernelInit = "glorot_uniform", recurrentInit = "orthogonal",
              biasInit = "zeros";
  bool unitForgetBias = true; ///< LSTM
  bool resetAfter = true;     ///< GRU
  RecurrentOptions options;

  bool isLstm() const { return cell == kernels::RecurrentCell::Lstm; }
  bool isGru() const { return cell == kernels::RecurrentCell::Gru; }
  int64_t gates() const { return kernels::recurrentGates(cell); }
  /// GRU reset_after's bias holds the input and the recurrent bias.
  bool splitBias() const { return isGru() && resetAfter; }

  void check() const {
    auto bad = [&](const std::string &what) {
      throw Error(className + ": " + what);
    };
    if (units <= 0)
      bad("units must be positive, got " + std::to_string(units));
    kernels::RecurrentActivation a;
    if (!kernels::parseRecurrentActivation(activation, a))
      bad("activation '" + activation +
          "' is not supported in a recurrent "
          "cell (supported: " +
          kernels::recurrentActivationNames() + ")");
    if (cell != kernels::RecurrentCell::SimpleRnn &&
        !kernels::parseRecurrentActivation(recurrentActivation, a))
      bad("recurrent_activation '" + recurrentActivation +
          "' is not supported (supported: " +
          kernels::recurrentActivationNames() + ")");
  }

  /// The keys of Keras's cell (LSTMCell, GRUCell, SimpleRNNCell).
  llvm::json::Object cellConfig() const {
    llvm::json::Object o{{"units", units},
                         {"activation", activation},
                         {"use_bias", useBias},
                         {"kernel_initializer", kernelInit},
                         {"recurrent_initializer", recurrentInit},
                         {"bias_initializer", biasInit},
                         {"dropout", 0.0},
                         {"recurrent_dropout", 0.0}};
    if (cell != kernels::RecurrentCell::SimpleRnn)
      o["recurrent_activation"] = recurrentActivation;
    if (isLstm())
      o["unit_forget_bias"] = unitForgetBias;
    if (isGru())
      o["reset_after"] = resetAfter;
    return o;
  }

  /// The cell's keys and the layer's.
  llvm::json::Object kerasConfig() const {
    llvm::json::Object o = cellConfig();
    for (auto &kv : optionsConfig(options))
      o[kv.first] = std::move(kv.second);
    return o;
  }

  static llvm::json::Object optionsConfig(const RecurrentOptions &options) {
    return llvm::json::Object{{"return_sequences", options.returnSequences},
                              {"return_state", options.returnState},
                              {"go_backwards", options.goBackwards},
                              {"stateful", false},
                              {"unroll", false}};
  }
};

struct WeightSpec {
  std::string name;
  Shape shape;
  std::string initializer;
};

/// The weights of cell `c` on `features` inputs, named `cell` + "/kernel"...
/// ("cell", "forward_layer/cell", "cell/cells/lstm_cell_1").
std::vector<WeightSpec> weightSpecs(const RecurrentConfig &c, int64_t features,
                                    const std::string &cell) {
  int64_t GH = c.gates() * c.units;
  std::string prefix = cell + "/";
  std::vector<WeightSpec> ws = {
      {prefix + "kernel", {features, GH}, c.kernelInit},
      {prefix + "recurrent_kernel", {c.units, GH}, c.recurrentInit}};
  if (c.useBias) {
    std::string init = c.biasInit;
    // Keras's LSTMCell: ones on the forget gate, bias_initializer around.
    if (c.isLstm() && c.unitForgetBias)
      init = init == "zeros" ? "unit_forget_bias"
                             : "unit_forget_bias(" + init + ")";
    ws.push_back(
        {prefix + "bias", c.splitBias() ? Shape{2, GH} : Shape{GH}, init});
  }
  return ws;
}

/// The layer's outputs when its input is masked (Keras's rnn with a mask):
/// a masked step keeps the previous state, and outputs the previous output
/// (or zeros with `zeroOutputForMask`, Bidirectional's rule when returning
/// sequences). One kc.recurrence per step, each starting from the state the
/// mask selected, so the cell's math and gradient stay the op's. `proj` is
/// the input projection [T, B, G*H], `mask` f32 [B, T].
std::vector<Tensor> runMasked(const RecurrentConfig &c, const Tensor &proj,
                              const Tensor &mask, const Tensor &recurrentKernel,
                              const Tensor &initial,
                              const Tensor &recurrentBias,
                              ops::RecurrenceSpec spec, bool timeOrdered,
                              bool zeroOutputForMask) {
  int64_t T = proj.dim(0), B = proj.dim(1), GH = proj.dim(2), H = c.units;
  int64_t K = initial.dim(1);
  bool backwards = spec.reverse;
  spec.reverse = false;
  Tensor real = maskAsCondition(mask);
  Tensor state = initial;
  std::vector<Tensor> outputs(T);
  Tensor last;
  for (int64_t s = 0; s < T; ++s) {
    int64_t t = backwards ? T - 1 - s : s;
    Tensor step = ops::slice(proj, {t, 0, 0}, {t + 1, B, GH}, {1, 1, 1});
    Tensor result =
        ops::recurrence(step, recurrentKernel, state, recurrentBias, spec);
    Tensor next = ops::reshape(
        ops::slice(result, {0, 0, 0}, {1, B, K}, {1, 1, 1}), {B, K});
    Tensor keep = ops::slice(real, {0, t}, {B, t + 1}, {1, 1});
    Tensor h = ops::slice(next, {0, 0}, {B, H}, {1, 1});
    state = ops::select(keep, next, state);
    last = outputs[timeOrdered ? t : s] =
        zeroOutputForMask ? ops::select(keep, h, ops::fillLike(h, {}, 0.0))
                          : ops::slice(state, {0, 0}, {B, H}, {1, 1});
  }
  std::vector<Tensor> outs;
  Tensor h = ops::slice(state, {0, 0}, {B, H}, {1, 1});
  if (c.options.returnSequences) {
    for (Tensor &o : outputs)
      o = ops::reshape(o, {B, 1, H});
    outs.push_back(T == 1 ? outputs[0] : ops::concat(outputs, 1));
  } else {
    // Keras's last output is the last step's: zeros where that step is
    // masked, with zero_output_for_mask.
    outs.push_back(zeroOutputForMask ? last : h);
  }
  if (c.options.returnState) {
    outs.push_back(h);
    if (c.isLstm())
      outs.push_back(ops::slice(state, {0, H}, {B, 2 * H}, {1, 1}));
  }
  return outs;
}

/// The layer's outputs on x [B, T, F] with its weights; with
/// `timeOrdered`, a backwards sequence output is put back in time order
/// (Bidirectional's backward half).
std::vector<Tensor>
runRecurrent(const RecurrentConfig &c, const Tensor &x, const Tensor &kernel,
             const Tensor &recurrentKernel, const std::optional<Tensor> &bias,
             bool timeOrdered = false, bool zeroOutputForMask = false) {
  int64_t B = x.dim(0), T = x.dim(1), F = x.dim(2), H = c.units;
  int64_t GH = c.gates() * H;
  Tensor rows = ops::reshape(ops::transpose(x, {1, 0, 2}), {T * B, F});
  Tensor proj = ops::matmul(rows, kernel);
  Tensor recurrentBias = ops::fillLike(kernel, {GH}, 0.0);
  if (bias) {
    if (c.splitBias()) {
      proj = ops::add(
          proj, ops::reshape(ops::slice(*bias, {0, 0}, {1, GH}, {1, 1}), {GH}));
      recurrentBias =
          ops::reshape(ops::slice(*bias, {1, 0}, {2, GH}, {1, 1}), {GH});
    } else {
      proj = ops::add(proj, *bias);
    }
  }
  proj = ops::reshape(proj, {T, B, GH});
  int64_t K = kernels::recurrentInitialWidth(c.cell, H);
  Tensor initial = ops::fillLike(kernel, {B, K}, 0.0);
  ops::RecurrenceSpec spec;
  spec.cell = kernels::recurrentCellName(c.cell);
  spec.resetAfter = c.resetAfter;
  spec.activation = c.activation;
  spec.recurrentActivation = c.cell == kernels::RecurrentCell::SimpleRnn
                                 ? std::string("sigmoid")
                                 : c.recurrentActivation;
  spec.reverse = c.options.goBackwards;
  if (const Tensor *mask = x.mask())
    return runMasked(c, proj, *mask, recurrentKernel, initial, recurrentBias,
                     spec, timeOrdered, zeroOutputForMask);
  Tensor states =
      ops::recurrence(proj, recurrentKernel, initial, recurrentBias, spec);
  auto lastStep = [&](int64_t from, int64_t to) {
    return ops::reshape(
        ops::slice(states, {T - 1, 0, from}, {T, B, to}, {1, 1, 1}),
        {B, to - from});
  };
  std::vector<Tensor> outs;
  Tensor h = lastStep(0, H);
  if (c.options.returnSequences) {
    Tensor seq = ops::slice(states, {0, 0, 0}, {T, B, H}, {1, 1, 1});
    if (timeOrdered && c.options.goBackwards && T > 1) {
      NDArray order = NDArray::empty({T}, DType::I32);
      for (int64_t t = 0; t < T; ++t)
        order.data<int32_t>()[t] = static_cast<int32_t>(T - 1 - t);
      seq = ops::gather(seq, Tensor(order));
    }
    outs.push_back(ops::transpose(seq, {1, 0, 2}));
  } else {
    outs.push_back(h);
  }
  if (c.options.returnState) {
    outs.push_back(h);
    if (c.isLstm())
      outs.push_back(lastStep(H, 2 * H));
  }
  return outs;
}

/// Keras's RNN.compute_mask: a sequence output keeps the input's mask; the
/// last output and the states have none.
std::vector<Tensor> withSequenceMask(const Tensor &x, const RecurrentConfig &c,
                                     std::vector<Tensor> outs) {
  if (x.mask() && c.options.returnSequences)
    outs[0] = outs[0].withMask(*x.mask());
  return outs;
}

const Tensor &
sequenceInput(const std::vector<Tensor> &inputs,
              const std::function<void(const std::string &)> &fail) {
  if (inputs.size() != 1)
    fail("expects one input (initial states are not supported), got " +
         std::to_string(inputs.size()));
  const Tensor &x = inputs[0];
  if (x.rank() != 3)
    fail("expects an input of rank 3 ([batch, steps, features]), got " +
         x.shapeString());
  if (x.dim(1) == 0)
    fail("expects at least one step, got " + x.shapeString());
  return x;
}

class RecurrentImpl : public LayerImpl {
public:
  explicit RecurrentImpl(RecurrentConfig config)
      : LayerImpl(config.className), c_(std::move(config)) {
    c_.check();
  }

  llvm::json::Object kerasConfig() const override { return c_.kerasConfig(); }
  const RecurrentConfig &config() const { return c_; }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 3)
      fail("expects one input of rank 3 ([batch, steps, features])");
    for (const WeightSpec &w : weightSpecs(c_, shapes[0][2], "cell"))
      addWeight(w.name, w.shape, w.initializer);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x =
        sequenceInput(inputs, [&](const std::string &m) { fail(m); });
    std::optional<Tensor> bias;
    if (c_.useBias)
      bias = weight(2);
    return withSequenceMask(x, c_,
                            runRecurrent(c_, x, weight(0), weight(1), bias));
  }
  MaskRule maskRule() const override { return MaskRule::Own; }

private:
  RecurrentConfig c_;
};

class BidirectionalImpl : public LayerImpl {
public:
  BidirectionalImpl(const RecurrentConfig &layer, std::string mergeMode)
      : LayerImpl("Bidirectional"), forward_(layer), backward_(layer),
        merge_(std::move(mergeMode)) {
    backward_.options.goBackwards = !layer.options.goBackwards;
    if (merge_ != "concat" && merge_ != "sum" && merge_ != "mul" &&
        merge_ != "ave")
      throw Error("Bidirectional: merge_mode '" + merge_ +
                  "' is not supported (supported: concat, sum, mul, ave)");
  }

  llvm::json::Object kerasConfig() const override {
    auto wrapped = [&](const RecurrentConfig &c, const char *direction) {
      llvm::json::Object config = c.kerasConfig();
      config["name"] = std::string(direction) + "_" + toSnakeCase(c.className);
      return llvm::json::Object{{"module", "keras.layers"},
                                {"class_name", c.className},
                                {"config", std::move(config)},
                                {"registered_name", nullptr}};
    };
    return llvm::json::Object{
        {"merge_mode", merge_},
        {"layer", wrapped(forward_, "forward")},
        {"backward_layer", wrapped(backward_, "backward")}};
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 3)
      fail("expects one input of rank 3 ([batch, steps, features])");
    for (const WeightSpec &w :
         weightSpecs(forward_, shapes[0][2], "forward_layer/cell"))
      addWeight(w.name, w.shape, w.initializer);
    for (const WeightSpec &w :
         weightSpecs(backward_, shapes[0][2], "backward_layer/cell"))
      addWeight(w.name, w.shape, w.initializer);
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x =
        sequenceInput(inputs, [&](const std::string &m) { fail(m); });
    size_t per = forward_.useBias ? 3 : 2;
    auto run = [&](const RecurrentConfig &c, size_t first) {
      std::optional<Tensor> bias;
      if (c.useBias)
        bias = weight(first + 2);
      return runRecurrent(c, x, weight(first), weight(first + 1), bias,
                          /*timeOrdered=*/true,
                          /*zeroOutputForMask=*/c.options.returnSequences);
    };
    std::vector<Tensor> fw = run(forward_, 0), bw = run(backward_, per);
    // Keras's Bidirectional zeros masked outputs when returning sequences.
    Tensor merged;
    if (merge_ == "concat")
      merged = ops::concat({fw[0], bw[0]}, -1);
    else if (merge_ == "sum")
      merged = ops::add(fw[0], bw[0]);
    else if (merge_ == "mul")
      merged = ops::mul(fw[0], bw[0]);
    else
      merged = ops::mul(ops::add(fw[0], bw[0]),
                        ops::fillLike(fw[0], fw[0].shape(), 0.5));
    std::vector<Tensor> outs = {merged};
    outs.insert(outs.end(), fw.begin() + 1, fw.end());
    outs.insert(outs.end(), bw.begin() + 1, bw.end());
    return withSequenceMask(x, forward_, outs);
  }
  MaskRule maskRule() const override { return MaskRule::Own; }

private:
  RecurrentConfig forward_, backward_;
  std::string merge_;
};

/// Keras's RNN around one cell, or around a StackedRNNCells whose cells
/// each read the previous cell's output at the same step. A stack computes
/// what the cells as layers one after the other compute (a masked step
/// keeps every cell's state, so what the lower cells output there is never
/// read), so each cell runs as its layer over the whole sequence: every
/// cell but the last returns its sequence, in time order when going
/// backwards, the order the next cell reads it in. Outputs: the last
/// cell's output, then with return_state each cell's states in cell order
/// (Keras's flattened nest). Weights: cell/kernel... for one cell,
/// cell/cells/<group>/kernel... for a stack, <group> numbered per class as
/// Keras's .keras writer numbers the list (lstm_cell, lstm_cell_1).
class RnnImpl : public LayerImpl {
public:
  RnnImpl(std::vector<RecurrentConfig> cells, bool stacked,
          RecurrentOptions options, bool zeroOutputForMask)
      : LayerImpl("RNN"), cells_(std::move(cells)), stacked_(stacked),
        options_(options), zeroOutputForMask_(zeroOutputForMask) {
    if (cells_.empty())
      throw Error("RNN: needs at least one cell");
    if (cells_.size() > 1 && !stacked_)
      throw Error("RNN: several cells are a stack (StackedRNNCells)");
    llvm::StringMap<int> counters;
    for (size_t i = 0; i < cells_.size(); ++i) {
      RecurrentConfig &c = cells_[i];
      c.check();
      bool lastCell = i + 1 == cells_.size();
      c.options.returnSequences = lastCell ? options.returnSequences : true;
      c.options.returnState = options.returnState;
      c.options.goBackwards = options.goBackwards;
      std::string group = toSnakeCase(c.className + "Cell");
      int n = counters[group]++;
      groups_.push_back(stacked_ ? "cell/cells/" + group +
                                       (n ? "_" + std::to_string(n) : "")
                                 : "cell");
    }
  }

  llvm::json::Object kerasConfig() const override {
    llvm::json::Object o = RecurrentConfig::optionsConfig(options_);
    o["zero_output_for_mask"] = zeroOutputForMask_;
    llvm::json::Array cells;
    for (size_t i = 0; i < cells_.size(); ++i) {
      llvm::json::Object config = cells_[i].cellConfig();
      config["name"] =
          stacked_ ? llvm::StringRef(groups_[i]).rsplit('/').second.str()
                   : toSnakeCase(cells_[i].className + "Cell");
      cells.push_back(
          cellEntry(cells_[i].className + "Cell", std::move(config)));
    }
    if (!stacked_) {
      o["cell"] = std::move(cells[0]);
      return o;
    }
    o["cell"] = cellEntry("StackedRNNCells",
                          llvm::json::Object{{"name", "stacked_rnn_cells"},
                                             {"cells", std::move(cells)}});
    return o;
  }

protected:
  void build(const std::vector<Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 3)
      fail("expects one input of rank 3 ([batch, steps, features])");
    int64_t features = shapes[0][2];
    for (size_t i = 0; i < cells_.size(); ++i) {
      for (const WeightSpec &w : weightSpecs(cells_[i], features, groups_[i]))
        addWeight(w.name, w.shape, w.initializer);
      features = cells_[i].units;
    }
  }

  std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                              const CallContext &) override {
    const Tensor &x =
        sequenceInput(inputs, [&](const std::string &m) { fail(m); });
    Tensor h = x;
    std::vector<Tensor> states;
    size_t first = 0;
    for (size_t i = 0; i < cells_.size(); ++i) {
      const RecurrentConfig &c = cells_[i];
      bool lastCell = i + 1 == cells_.size();
      std::optional<Tensor> bias;
      if (c.useBias)
        bias = weight(first + 2);
      std::vector<Tensor> outs =
          runRecurrent(c, h, weight(first), weight(first + 1), bias,
                       /*timeOrdered=*/!lastCell,
                       /*zeroOutputForMask=*/lastCell && zeroOutputForMask_);
      first += c.useBias ? 3 : 2;
      states.insert(states.end(), outs.begin() + 1, outs.end());
      h = x.mask() && !lastCell ? outs[0].withMask(*x.mask()) : outs[0];
    }
    std::vector<Tensor> outs = {h};
    outs.insert(outs.end(), states.begin(), states.end());
    return withSequenceMask(x, cells_.back(), outs);
  }
  MaskRule maskRule() const override { return MaskRule::Own; }

private:
  static llvm::json::Object cellEntry(const std::string &className,
                                      llvm::json::Object config) {
    return llvm::json::Object{{"module", "keras.layers"},
                              {"class_name", className},
                              {"config", std::move(config)},
                              {"registered_name", nullptr}};
  }

  std::vector<RecurrentConfig> cells_;
  bool stacked_;
  RecurrentOptions options_;
  bool zeroOutputForMask_;
  /// Per cell, the prefix of its weights' names.
  std::vector<std::string> groups_;
};

} // namespace

namespace {

/// The config every recurrent class shares; the caller sets its own flags.
RecurrentConfig baseConfig(const char *className, kernels::RecurrentCell cell,
                           int64_t units, const std::string &activation,
                           const std::string &recurrentActivation, bool useBias,
                           const std::string &kernelInit,
                           const std::string &recurrentInit,
                           const std::string &biasInit,
                           RecurrentOptions options) {
  RecurrentConfig c;
  c.className = className;
  c.cell = cell;
  c.units = units;
  c.activation = activation;
  c.recurrentActivation = recurrentActivation;
  c.useBias = useBias;
  c.kernelInit = kernelInit;
  c.recurrentInit = recurrentInit;
  c.biasInit = biasInit;
  c.options = options;
  return c;
}

} // namespace

LSTM::LSTM(int64_t units, const std::string &activation,
           const std::string &recurrentActivation, bool useBias,
           const std::string &kernelInitializer,
           const std::string &recurrentInitializer,
           const std::string &biasInitializer, bool unitForgetBias,
           RecurrentOptions options)
    : Layer([&] {
        RecurrentConfig c =
            baseConfig("LSTM", kernels::RecurrentCell::Lstm, units, activation,
                       recurrentActivation, useBias, kernelInitializer,
                       recurrentInitializer, biasInitializer, options);
        c.unitForgetBias = unitForgetBias;
        return std::make_shared<RecurrentImpl>(c);
      }()) {}

GRU::GRU(int64_t units, const std::string &activation,
         const std::string &recurrentActivation, bool useBias,
         const std::string &kernelInitializer,
         const std::string &recurrentInitializer,
         const std::string &biasInitializer, RecurrentOptions options,
         bool resetAfter)
    : Layer([&] {
        RecurrentConfig c =
            baseConfig("GRU", kernels::RecurrentCell::Gru, units, activation,
                       recurrentActivation, useBias, kernelInitializer,
                       recurrentInitializer, biasInitializer, options);
        c.resetAfter = resetAfter;
        return std::make_shared<RecurrentImpl>(c);
      }()) {}

SimpleRNN::SimpleRNN(int64_t units, const std::string &activation, bool useBias,
                     const std::string &kernelInitializer,
                     const std::string &recurrentInitializer,
                     const std::string &biasInitializer,
                     RecurrentOptions options)
    : Layer(std::make_shared<RecurrentImpl>(
          baseConfig("SimpleRNN", kernels::RecurrentCell::SimpleRnn, units,
                     activation, "sigmoid", useBias, kernelInitializer,
                     recurrentInitializer, biasInitializer, options))) {}

Bidirectional::Bidirectional(const Layer &layer, const std::string &mergeMode)
    : Layer([&] {
        auto *rnn = dynamic_cast<const RecurrentImpl *>(layer.impl().get());
        if (!rnn)
          throw Error("Bidirectional: expects an LSTM, GRU or SimpleRNN "
                      "layer, got " +
                      layer.className());
        return std::make_shared<BidirectionalImpl>(rnn->config(), mergeMode);
      }()) {}

RNN::RNN(const std::vector<Layer> &cells, RecurrentOptions options,
         bool zeroOutputForMask, bool stacked)
    : Layer([&] {
        std::vector<RecurrentConfig> configs;
        for (const Layer &cell : cells) {
          auto *rnn = dynamic_cast<const RecurrentImpl *>(cell.impl().get());
          if (!rnn)
            throw Error("RNN: a cell must be an LSTM, GRU or SimpleRNN "
                        "layer, got " +
                        cell.className());
          configs.push_back(rnn->config());
        }
        return std::make_shared<RnnImpl>(std::move(configs),
                                         stacked || cells.size() > 1, options,
                                         zeroOutputForMask);
      }()) {}
