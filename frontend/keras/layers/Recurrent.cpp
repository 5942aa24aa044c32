//===- Recurrent.cpp - Keras's recurrent layers --------------------------===//
//
// LSTM, GRU and SimpleRNN, alone or in a Bidirectional, RNN of their cells,
// and TimeDistributed
// (keras/src/layers/rnn/).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"
#include "runtime/MemoryBudget.h"

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// LSTM, GRU and SimpleRNN, alone or as the layer a Bidirectional wraps.
/// What would change the result and kcc does not model (dropout, masks
/// carried across batches, constraints, regularizers) is refused; unroll
/// and implementation only choose how Keras computes the same values.
Layer buildRecurrent(const ObjectView &c, const std::string &cls) {
  checkNull(c, {"kernel_constraint", "recurrent_constraint", "bias_constraint",
                "kernel_regularizer", "recurrent_regularizer",
                "bias_regularizer", "activity_regularizer"});
  if (c.getBool("stateful", false))
    c.failField("stateful", "stateful: true is not supported (every batch "
                            "starts from zero states)");
  if (c.getBool("time_major", false))
    c.failField("time_major", "time_major: true is not supported");
  for (const char *key : {"dropout", "recurrent_dropout"})
    if (c.getNumber(key, 0.0) != 0.0)
      c.failField(key,
                  "'" + std::string(key) + "' is not supported (must be 0)");
  RecurrentOptions options;
  options.returnSequences = c.getBool("return_sequences", false);
  options.returnState = c.getBool("return_state", false);
  options.goBackwards = c.getBool("go_backwards", false);
  int64_t units = readWidth(c, "units");
  int64_t gates = cls == "LSTM" ? 4 : cls == "GRU" ? 3 : 1;
  if (TensorSize row = tensorSize({gates * 2, units}, sizeof(float), "f32");
      !row)
    c.failField("units", "units " + std::to_string(units) +
                             " is too large: its gates, " + row.error);
  std::string activation = readActivationAt(c, "activation", "tanh");
  bool useBias = c.getBool("use_bias", true);
  std::string kernelInit =
      readInitializer(c, "kernel_initializer", "glorot_uniform");
  std::string recurrentInit =
      readInitializer(c, "recurrent_initializer", "orthogonal");
  std::string biasInit = readInitializer(c, "bias_initializer", "zeros");
  if (cls == "SimpleRNN")
    return SimpleRNN(units, activation, useBias, kernelInit, recurrentInit,
                     biasInit, options);
  std::string recurrentActivation =
      readActivationAt(c, "recurrent_activation", "sigmoid");
  if (cls == "LSTM")
    return LSTM(units, activation, recurrentActivation, useBias, kernelInit,
                recurrentInit, biasInit, c.getBool("unit_forget_bias", true),
                options);
  return GRU(units, activation, recurrentActivation, useBias, kernelInit,
             recurrentInit, biasInit, options, c.getBool("reset_after", true));
}

bool isRecurrentClass(llvm::StringRef cls) {
  return cls == "LSTM" || cls == "GRU" || cls == "SimpleRNN";
}

/// The recurrent layer of a Bidirectional's "layer" or "backward_layer".
Layer buildWrappedRecurrent(const ObjectView &c, llvm::StringRef key) {
  ObjectView entry = c.child(key);
  std::string cls = entry.getString("class_name");
  checkBuiltin(entry, cls);
  if (!isRecurrentClass(cls))
    entry.failField("class_name", "Bidirectional around '" + cls +
                                      "' is not supported (LSTM, GRU or "
                                      "SimpleRNN)");
  ObjectView config = entry.child("config");
  readDTypePolicy(config);
  return buildRecurrent(config, cls);
}

/// kcc's Bidirectional runs a copy of the forward layer backwards, so a
/// backward_layer must be that copy: the same config but go_backwards.
Layer buildBidirectional(const ObjectView &c) {
  const json::Value *mode = c.object().get("merge_mode");
  if (mode && mode->kind() == json::Value::Null)
    c.failField("merge_mode", "merge_mode: null (separate forward and "
                              "backward outputs) is not supported");
  Layer forward = buildWrappedRecurrent(c, "layer");
  if (c.has("backward_layer")) {
    Layer backward = buildWrappedRecurrent(c, "backward_layer");
    json::Object f = forward.impl()->kerasConfig();
    json::Object b = backward.impl()->kerasConfig();
    bool flipped = f.getBoolean("go_backwards") != b.getBoolean("go_backwards");
    b["go_backwards"] = f["go_backwards"];
    if (!flipped || json::Value(std::move(f)) != json::Value(std::move(b)))
      c.failField("backward_layer",
                  "a backward_layer other than the forward layer going "
                  "the other way is not supported");
  }
  return Bidirectional(forward, c.getString("merge_mode", "concat"));
}

/// A cell of an RNN: LSTMCell, GRUCell or SimpleRNNCell, read as the layer
/// of the same name (its config holds no return or direction keys).
Layer buildCell(const ObjectView &entry) {
  std::string cls = entry.getString("class_name");
  checkBuiltin(entry, cls);
  llvm::StringRef layer = llvm::StringRef(cls);
  if (!layer.consume_back("Cell") || !isRecurrentClass(layer))
    entry.failField("class_name", "an RNN cell '" + cls +
                                      "' is not supported (LSTMCell, "
                                      "GRUCell, SimpleRNNCell or a "
                                      "StackedRNNCells of them)");
  ObjectView config = entry.child("config");
  readDTypePolicy(config);
  return buildRecurrent(config, layer.str());
}

/// Keras's RNN of a cell or of a StackedRNNCells.
Layer buildRnn(const ObjectView &c) {
  if (c.getBool("stateful", false))
    c.failField("stateful", "stateful: true is not supported (every batch "
                            "starts from zero states)");
  if (c.getBool("time_major", false))
    c.failField("time_major", "time_major: true is not supported");
  RecurrentOptions options;
  options.returnSequences = c.getBool("return_sequences", false);
  options.returnState = c.getBool("return_state", false);
  options.goBackwards = c.getBool("go_backwards", false);
  bool zeroOutput = c.getBool("zero_output_for_mask", false);
  ObjectView cell = c.child("cell");
  if (cell.getString("class_name") != "StackedRNNCells")
    return RNN({buildCell(cell)}, options, zeroOutput);
  checkBuiltin(cell, "StackedRNNCells");
  ObjectView stack = cell.child("config");
  const json::Value *list = stack.get("cells");
  if (!list || !list->getAsArray() || list->getAsArray()->empty())
    stack.failField("cells", "a StackedRNNCells needs a list of 'cells'");
  std::vector<Layer> cells;
  JsonPath at = stack.path().field("cells");
  for (auto [i, v] : llvm::enumerate(*list->getAsArray()))
    cells.push_back(buildCell(
        ObjectView::of(c.reader(), v, at.index(i), c.context(), "a cell")));
  return RNN(cells, options, zeroOutput, /*stacked=*/true);
}

/// One layer of a TimeDistributed: a built-in class whose config is read
/// as any layer's (a model inside it is refused).
Layer buildDistributedLayer(const ObjectView &entry) {
  std::string cls = entry.getString("class_name");
  checkBuiltin(entry, cls);
  if (cls == "Functional" || cls == "Model" || cls == "Sequential")
    entry.failField("class_name", "TimeDistributed of a " + cls +
                                      " inside a Sequential is not "
                                      "supported");
  ObjectView config = entry.child("config");
  std::string name = config.getString("name", "");
  config.setContext(layerContext(name, cls));
  BuiltLayer built = buildLayer(config, cls, name, CallOptions{});
  built.layer.setTrainable(built.trainable);
  return built.layer;
}

/// TimeDistributed of a layer or of a Sequential (its layers run in
/// order); a functional model is refused.
Layer buildTimeDistributed(const ObjectView &c) {
  ObjectView entry = c.child("layer");
  std::string cls = entry.getString("class_name");
  checkBuiltin(entry, cls);
  if (cls == "Functional" || cls == "Model")
    entry.failField("class_name", "TimeDistributed of a functional model is "
                                  "not supported (of a Sequential it is)");
  if (cls != "Sequential")
    return TimeDistributed(buildDistributedLayer(entry));
  ObjectView config = entry.child("config");
  const json::Value *list = config.get("layers");
  if (!list || !list->getAsArray())
    config.failField("layers", "a Sequential needs a list of 'layers'");
  std::vector<Layer> layers;
  JsonPath at = config.path().field("layers");
  for (auto [i, v] : llvm::enumerate(*list->getAsArray())) {
    ObjectView e =
        ObjectView::of(c.reader(), v, at.index(i), c.context(), "a layer");
    if (e.getString("class_name") == "InputLayer")
      continue;
    layers.push_back(buildDistributedLayer(e));
  }
  if (layers.empty())
    config.failField("layers", "the Sequential has no layers to apply");
  Layer td = TimeDistributed(layers, config.getString("name", "sequential"));
  if (!config.getBool("trainable", true))
    for (const Layer &l : layers)
      l.setTrainable(false);
  return td;
}

/// kernel_size, strides or dilation_rate of a ConvLSTM of `rank`: an int
/// or a list of `rank`, each in [1, 2^31-1].
std::vector<int64_t> readConvTuple(const ObjectView &c, llvm::StringRef key,
                                   int rank, std::optional<int64_t> dflt) {
  if (rank == 1)
    return {readSize1(c, key, dflt)};
  if (rank == 2) {
    Size2 s =
        checkedSize2(c, key,
                     c.getSize2(key, dflt ? std::optional<Size2>(Size2(*dflt))
                                          : std::nullopt));
    return {s.h, s.w};
  }
  Size3 s = readSize3(c, key,
                      dflt ? std::optional<Size3>(Size3(*dflt)) : std::nullopt);
  return {s.d, s.h, s.w};
}

/// ConvLSTM1D/2D/3D; refused as LSTM refuses (dropout, stateful,
/// regularizers, constraints).
Layer buildConvLSTM(const ObjectView &c, int rank) {
  checkNull(c, {"kernel_constraint", "recurrent_constraint", "bias_constraint",
                "kernel_regularizer", "recurrent_regularizer",
                "bias_regularizer", "activity_regularizer"});
  checkChannelsLast(c);
  if (c.getBool("stateful", false))
    c.failField("stateful", "stateful: true is not supported (every batch "
                            "starts from zero states)");
  for (const char *key : {"dropout", "recurrent_dropout"})
    if (c.getNumber(key, 0.0) != 0.0)
      c.failField(key,
                  "'" + std::string(key) + "' is not supported (must be 0)");
  ConvLSTMOptions o;
  o.filters = readWidth(c, "filters");
  if (TensorSize gates = tensorSize({4, o.filters}, sizeof(float), "f32");
      !gates)
    c.failField("filters", "filters " + std::to_string(o.filters) +
                               " is too large: its gates, " + gates.error);
  o.kernelSize = readConvTuple(c, "kernel_size", rank, std::nullopt);
  o.strides = readConvTuple(c, "strides", rank, 1);
  o.dilationRate = readConvTuple(c, "dilation_rate", rank, 1);
  o.padding = readPadding(c);
  o.activation = readActivationAt(c, "activation", "tanh");
  o.recurrentActivation =
      readActivationAt(c, "recurrent_activation", "sigmoid");
  o.useBias = c.getBool("use_bias", true);
  o.kernelInitializer =
      readInitializer(c, "kernel_initializer", "glorot_uniform");
  o.recurrentInitializer =
      readInitializer(c, "recurrent_initializer", "orthogonal");
  o.biasInitializer = readInitializer(c, "bias_initializer", "zeros");
  o.unitForgetBias = c.getBool("unit_forget_bias", true);
  o.options.returnSequences = c.getBool("return_sequences", false);
  o.options.returnState = c.getBool("return_state", false);
  o.options.goBackwards = c.getBool("go_backwards", false);
  if (rank == 1)
    return ConvLSTM1D(std::move(o));
  if (rank == 2)
    return ConvLSTM2D(std::move(o));
  return ConvLSTM3D(std::move(o));
}

} // namespace

void keras::addRecurrentLayers(std::vector<LayerClass> &classes) {
  for (int rank : {1, 2, 3})
    classes.push_back(
        {"ConvLSTM" + std::to_string(rank) + "D",
         "rnn",
         [rank](const ObjectView &c, const CallOptions &) {
           return buildConvLSTM(c, rank);
         },
         {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
          "activity_regularizer", "kernel_constraint", "recurrent_constraint",
          "bias_constraint", "seed"},
         {},
         "`filters`, `kernel_size`, `strides`, `padding`, `dilation_rate`, "
         "`activation`, `recurrent_activation`, `use_bias`, initializers, "
         "`unit_forget_bias`, `return_sequences`, `return_state`, "
         "`go_backwards`"});
  classes.push_back(
      {"LSTM",
       "rnn",
       [](const ObjectView &c, const CallOptions &) {
         return buildRecurrent(c, "LSTM");
       },
       {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
        "activity_regularizer", "kernel_constraint", "recurrent_constraint",
        "bias_constraint", "seed"},
       {},
       "`units`, `activation`, `recurrent_activation`, `use_bias`, "
       "initializers, `unit_forget_bias`, `return_sequences`, `return_state`, "
       "`go_backwards`"});
  classes.push_back(
      {"GRU",
       "rnn",
       [](const ObjectView &c, const CallOptions &) {
         return buildRecurrent(c, "GRU");
       },
       {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
        "activity_regularizer", "kernel_constraint", "recurrent_constraint",
        "bias_constraint", "seed"},
       {},
       "as LSTM, with `reset_after` (true or false) in place of "
       "`unit_forget_bias`"});
  classes.push_back(
      {"SimpleRNN",
       "rnn",
       [](const ObjectView &c, const CallOptions &) {
         return buildRecurrent(c, "SimpleRNN");
       },
       {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
        "activity_regularizer", "kernel_constraint", "recurrent_constraint",
        "bias_constraint", "seed"},
       {},
       "`units`, `activation`, `use_bias`, initializers, `return_sequences`, "
       "`return_state`, `go_backwards`"});
  classes.push_back(
      {"RNN",
       "rnn",
       [](const ObjectView &c, const CallOptions &) { return buildRnn(c); },
       {},
       {},
       "`cell`: an LSTMCell, GRUCell or SimpleRNNCell (read as the layer), "
       "or a StackedRNNCells of them; `return_sequences`, `return_state`, "
       "`go_backwards`, `zero_output_for_mask`"});
  classes.push_back({"Bidirectional",
                     "rnn",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildBidirectional(c);
                     },
                     {},
                     {},
                     "`layer` (LSTM, GRU or SimpleRNN), `merge_mode`, a "
                     "`backward_layer` that mirrors it"});
  classes.push_back({"TimeDistributed",
                     "rnn",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildTimeDistributed(c);
                     },
                     {},
                     {},
                     "`layer`: any layer kcc imports, or a Sequential of "
                     "them, applied to every step"});
}
