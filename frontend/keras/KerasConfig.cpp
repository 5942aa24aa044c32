//===- KerasConfig.cpp - Keras 3 configs for kcc models -------------------===//
//
// What Keras 3's model.to_json() writes, for the layers kcc has: each
// layer's get_config() (name, trainable, a float32 DTypePolicy, the
// hyper-parameters of LayerImpl::kerasConfig, initializers as serialized
// Keras objects) and a build_config; Sequential models list their layers
// after an InputLayer, functional ones add inbound_nodes with
// __keras_tensor__ arguments and input_layers / output_layers. The
// compile_config follows Keras 3's Trainer.get_compile_config().
//
//===----------------------------------------------------------------------===//

#include "frontend/Initializers.h"
#include "frontend/Layers.h"
#include "frontend/keras/LayerRegistry.h"
#include "frontend/keras/PythonJson.h"
#include "frontend/keras/Saving.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// NumPy's names, as Keras writes an InputLayer's dtype.
const char *kerasDType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float32";
  case DType::F64:
    return "float64";
  case DType::I32:
    return "int32";
  case DType::I64:
    return "int64";
  case DType::I1:
    return "bool";
  case DType::F16:
    return "float16";
  case DType::BF16:
    return "bfloat16";
  }
  return "float32";
}

json::Value dtypePolicy(llvm::StringRef name = "float32") {
  return json::Object{{"module", "keras"},
                      {"class_name", "DTypePolicy"},
                      {"config", json::Object{{"name", name}}},
                      {"registered_name", nullptr}};
}

/// [null, d1, ...]: a batched shape with Keras's None batch.
json::Value batchedShape(const Shape &shape) {
  json::Array a{nullptr};
  for (size_t i = 1; i < shape.size(); ++i)
    a.push_back(shape[i]);
  return a;
}

/// keras.initializers.serialize() of kcc's text form: the class and its
/// get_config() with Keras's keys (seeds null: kcc keeps none).
json::Value initializer(llvm::StringRef text) {
  std::string why;
  std::optional<init::Initializer> parsed = init::parse(text.str(), &why);
  std::string cls = parsed ? init::kerasClassName(parsed->name) : "";
  if (cls.empty())
    throw Error("initializer '" + text.str() +
                "' has no Keras counterpart to save" +
                (parsed ? "" : ": " + why));
  const init::Initializer &i = *parsed;
  json::Object config;
  if (i.name == "random_normal" || i.name == "truncated_normal")
    config =
        json::Object{{"seed", nullptr}, {"mean", i.mean}, {"stddev", i.stddev}};
  else if (i.name == "random_uniform")
    config = json::Object{
        {"seed", nullptr}, {"minval", i.minval}, {"maxval", i.maxval}};
  else if (i.name == "constant")
    config = json::Object{{"value", i.value}};
  else if (i.name == "variance_scaling")
    config =
        json::Object{{"seed", nullptr},       {"scale", i.scale},
                     {"mode", i.mode},        {"distribution", i.distribution},
                     {"input_axes", nullptr}, {"output_axes", nullptr}};
  else if (i.name == "identity" && i.gain != 1.0)
    // Keras 3.15.1's Identity.get_config() is {} (its gain is lost on a
    // save); its from_config(), Identity(**config), reads a gain back.
    config = json::Object{{"gain", i.gain}};
  else if (i.name == "orthogonal")
    config = json::Object{{"gain", i.gain}, {"seed", nullptr}};
  else if (i.name != "zeros" && i.name != "ones" && i.name != "identity")
    config = json::Object{
        {"seed", nullptr}, {"input_axes", nullptr}, {"output_axes", nullptr}};
  return json::Object{{"module", "keras.initializers"},
                      {"class_name", cls},
                      {"config", std::move(config)},
                      {"registered_name", nullptr}};
}

/// The `*_initializer` entries of a get_config() (kcc's text forms) as
/// serialized Keras initializers.
void serializeInitializers(json::Object &config) {
  for (const char *key :
       {"kernel_initializer", "bias_initializer", "beta_initializer",
        "gamma_initializer", "moving_mean_initializer",
        "moving_variance_initializer", "embeddings_initializer",
        "alpha_initializer", "depthwise_initializer", "pointwise_initializer",
        "recurrent_initializer"})
    if (std::optional<llvm::StringRef> init = config.getString(key))
      config[key] = initializer(*init);
}

/// keras.regularizers.serialize(): L1 or L2 when one factor is set, else
/// L1L2; null for none.
json::Value regularizerJson(const std::optional<Regularizer> &r) {
  if (!r)
    return nullptr;
  std::string cls = r->l2 == 0 && r->l1 != 0   ? "L1"
                    : r->l1 == 0 && r->l2 != 0 ? "L2"
                                               : "L1L2";
  json::Object config;
  if (cls != "L2")
    config["l1"] = r->l1;
  if (cls != "L1")
    config["l2"] = r->l2;
  return json::Object{{"module", "keras.regularizers"},
                      {"class_name", cls},
                      {"config", std::move(config)},
                      {"registered_name", nullptr}};
}

json::Object layerEntry(const Layer &layer, json::Value buildInputShape);

/// What a TimeDistributed wraps: the layer's entry, or a Sequential of
/// them. No build_config: TimeDistributed.build builds them on one step.
json::Object distributedEntry(const std::vector<Layer> &layers,
                              const std::string &sequentialName) {
  auto entry = [](const Layer &l) {
    json::Object e = layerEntry(l, nullptr);
    e.erase("build_config");
    return e;
  };
  if (sequentialName.empty())
    return entry(layers.at(0));
  json::Array entries;
  for (const Layer &l : layers)
    entries.push_back(entry(l));
  return json::Object{{"module", "keras"},
                      {"class_name", "Sequential"},
                      {"config", json::Object{{"name", sequentialName},
                                              {"trainable", true},
                                              {"dtype", dtypePolicy()},
                                              {"layers", std::move(entries)}}},
                      {"registered_name", nullptr}};
}

/// Serializes the initializers of `config` and of the layers and cells it
/// wraps (Bidirectional's "layer" and "backward_layer", an RNN's "cell", a
/// StackedRNNCells' "cells").
void serializeNestedInitializers(json::Object &config) {
  serializeInitializers(config);
  auto inner = [](json::Object *entry) {
    if (entry)
      if (json::Object *c = entry->getObject("config"))
        serializeNestedInitializers(*c);
  };
  for (const char *wrapped : {"layer", "backward_layer", "cell"})
    inner(config.getObject(wrapped));
  if (json::Array *cells = config.getArray("cells"))
    for (json::Value &cell : *cells)
      inner(cell.getAsObject());
}

/// A layer's get_config(), Keras 3's keys and defaults.
json::Object layerConfig(const Layer &layer) {
  LayerImpl &impl = *layer.impl();
  const std::string &cls = layer.className();
  json::Object c{{"name", layer.name()},
                 {"trainable", impl.trainable()},
                 {"dtype", dtypePolicy(impl.dtypePolicy())}};
  json::Object own = impl.kerasConfig();
  if (auto wrapped = timeDistributedLayers(layer))
    own["layer"] = distributedEntry(wrapped->first, wrapped->second);
  serializeNestedInitializers(own);
  for (auto &kv : own)
    c[kv.first] = std::move(kv.second);
  const keras::LayerClass *entry = keras::findLayerClass(cls);
  if (!entry || !entry->read)
    throw Error("layer '" + layer.name() + "' (" + cls +
                "): no Keras config is known for this class");
  keras::addSavedKeys(*entry, c);
  // `<weight>_regularizer` keys the registry wrote as null.
  for (const std::string &name : impl.regularizableWeights())
    if (std::optional<Regularizer> r =
            impl.weightRegularizer(impl.regularizedWeight(name)))
      c[name + "_regularizer"] = regularizerJson(r);
  // Keras's base Layer writes activity_regularizer only when set.
  if (impl.activityRegularizer() && impl.savesActivityRegularizer())
    c["activity_regularizer"] = regularizerJson(impl.activityRegularizer());
  return c;
}

json::Object layerEntry(const Layer &layer, json::Value buildInputShape) {
  // Arithmetic with a number: the keras.ops node Keras 3 saves for it.
  if (scalarOperandOf(layer)) {
    std::string cls =
        layer.className() == "Divide" ? "TrueDivide" : layer.className();
    return json::Object{{"module", "keras.src.ops.numpy"},
                        {"class_name", cls},
                        {"config", json::Object{{"name", layer.name()}}},
                        {"registered_name", cls}};
  }
  json::Object build{{"input_shape", std::move(buildInputShape)}};
  // MultiHeadAttention builds from named shapes (build(query_shape,
  // value_shape, key_shape)).
  if (isMultiHeadAttentionClass(layer.className())) {
    json::Array *shapes = build.getArray("input_shape");
    json::Object dict;
    const char *names[] = {"query_shape", "value_shape", "key_shape"};
    for (size_t i = 0; shapes && i < shapes->size() && i < 3; ++i)
      dict[names[i]] = std::move((*shapes)[i]);
    build = json::Object{{"shapes_dict", std::move(dict)}};
  }
  const keras::LayerClass *cls = keras::findLayerClass(layer.className());
  auto orNull = [](const std::optional<std::string> &s) -> json::Value {
    return s ? json::Value(*s) : json::Value(nullptr);
  };
  return json::Object{
      {"module", cls ? orNull(cls->module) : "keras.layers"},
      {"class_name", layer.className()},
      {"config", layerConfig(layer)},
      {"registered_name", cls ? orNull(cls->registeredName) : nullptr},
      {"build_config", std::move(build)}};
}

json::Object inputLayerEntry(const Tensor &input, const std::string &name) {
  return json::Object{
      {"module", "keras.layers"},
      {"class_name", "InputLayer"},
      {"config", json::Object{{"batch_shape", batchedShape(input.shape())},
                              {"dtype", kerasDType(input.dtype())},
                              {"sparse", false},
                              {"ragged", false},
                              {"name", name},
                              {"optional", false}}},
      {"registered_name", nullptr}};
}

/// The graph's layer-call nodes, each after its inputs (depth first from
/// the outputs), and what Keras calls them: (layer, node index).
struct GraphOrder {
  std::vector<SymbolicNode *> nodes;
  /// Layer names as Keras's Functional orders model.layers (map_graph in
  /// keras/src/ops/function.py): by depth from the outputs, deepest first,
  /// ties by first visit in a depth-first walk from the outputs.
  std::vector<std::string> kerasLayers;
  llvm::DenseMap<SymbolicNode *, std::pair<std::string, int64_t>> names;
  std::vector<SymbolicNode *> inputs;
};

GraphOrder orderGraph(Model &model) {
  GraphOrder order;
  llvm::StringMap<int64_t> callsOf;
  llvm::DenseMap<SymbolicNode *, bool> seen;
  std::vector<std::string> inputNames = inputLayerNames(model);
  for (auto [i, in] : llvm::enumerate(model.graphInputs())) {
    SymbolicNode *n = in.node().get();
    order.inputs.push_back(n);
    order.names[n] = {inputNames[i], 0};
    seen[n] = true;
  }
  // An explicit stack: chains may be 100,000 layers deep.
  std::vector<std::pair<SymbolicNode *, size_t>> stack;
  for (const Tensor &out : model.graphOutputs())
    stack.push_back({out.node().get(), 0});
  llvm::DenseMap<LayerImpl *, size_t> firstVisit;
  while (!stack.empty()) {
    auto &[node, next] = stack.back();
    if (seen.count(node) && next == 0) {
      stack.pop_back();
      continue;
    }
    if (next == 0 && node->layer)
      firstVisit.try_emplace(node->layer.get(), firstVisit.size());
    if (next < node->inputs.size()) {
      SymbolicNode *in = node->inputs[next++].node().get();
      if (!seen.count(in))
        stack.push_back({in, 0});
      continue;
    }
    seen[node] = true;
    SymbolicNode *done = node;
    stack.pop_back();
    if (done->isInput())
      throw Error("model '" + model.name() +
                  "': an input the model does not declare");
    Layer layer(done->layer);
    order.names[done] = {layer.name(), callsOf[layer.name()]++};
    order.nodes.push_back(done);
  }
  // Depths: from the outputs back, a node one deeper than its deepest
  // consumer; a layer as deep as its deepest call.
  llvm::DenseMap<SymbolicNode *, int64_t> nodeDepth;
  llvm::DenseMap<LayerImpl *, int64_t> layerDepth;
  for (SymbolicNode *node : llvm::reverse(order.nodes)) {
    int64_t depth = nodeDepth.lookup(node);
    int64_t &ld = layerDepth[node->layer.get()];
    depth = std::max(depth, ld);
    ld = depth;
    nodeDepth[node] = depth;
    for (const Tensor &in : node->inputs) {
      int64_t &d = nodeDepth[in.node().get()];
      d = std::max(d, depth + 1);
    }
  }
  std::vector<LayerImpl *> layers;
  llvm::DenseSet<LayerImpl *> listed;
  for (SymbolicNode *node : order.nodes)
    if (listed.insert(node->layer.get()).second)
      layers.push_back(node->layer.get());
  std::stable_sort(
      layers.begin(), layers.end(), [&](LayerImpl *a, LayerImpl *b) {
        int64_t da = layerDepth.lookup(a), db = layerDepth.lookup(b);
        return da != db ? da > db : firstVisit.lookup(a) < firstVisit.lookup(b);
      });
  for (LayerImpl *l : layers)
    order.kerasLayers.push_back(l->name());
  return order;
}

json::Value kerasTensor(const Tensor &t, const GraphOrder &order) {
  auto [layer, node] = order.names.lookup(t.node().get());
  return json::Object{
      {"class_name", "__keras_tensor__"},
      {"config", json::Object{{"shape", batchedShape(t.shape())},
                              {"dtype", "float32"},
                              {"keras_history",
                               json::Array{layer, node, t.outputIndex()}}}}};
}

json::Value nodeShapes(const SymbolicNode &node) {
  if (node.inputs.size() == 1)
    return batchedShape(node.inputs[0].shape());
  json::Array shapes;
  for (const Tensor &t : node.inputs)
    shapes.push_back(batchedShape(t.shape()));
  return shapes;
}

json::Object sequentialConfig(Model &model) {
  GraphOrder order = orderGraph(model);
  const Tensor &input = model.graphInputs().at(0);
  json::Array layers{
      inputLayerEntry(input, order.names[order.inputs[0]].first)};
  for (SymbolicNode *node : order.nodes)
    layers.push_back(layerEntry(Layer(node->layer), nodeShapes(*node)));
  json::Value shape = batchedShape(input.shape());
  return json::Object{{"module", "keras"},
                      {"class_name", "Sequential"},
                      {"config", json::Object{{"name", model.name()},
                                              {"trainable", true},
                                              {"dtype", dtypePolicy()},
                                              {"layers", std::move(layers)},
                                              {"build_input_shape", shape}}},
                      {"registered_name", nullptr},
                      {"build_config", json::Object{{"input_shape", shape}}}};
}

json::Value refList(const std::vector<Tensor> &tensors,
                    const GraphOrder &order) {
  json::Array refs;
  for (const Tensor &t : tensors) {
    auto [layer, node] = order.names.lookup(t.node().get());
    refs.push_back(json::Array{layer, node, t.outputIndex()});
  }
  // One input (output): Keras writes the bare triple.
  if (refs.size() == 1)
    return std::move(refs[0]);
  return refs;
}

json::Object functionalConfig(Model &model) {
  GraphOrder order = orderGraph(model);
  json::Array layers;
  for (auto [i, input] : llvm::enumerate(model.graphInputs())) {
    json::Object e = inputLayerEntry(input, order.names[order.inputs[i]].first);
    e["name"] = order.names[order.inputs[i]].first;
    e["inbound_nodes"] = json::Array{};
    layers.push_back(std::move(e));
  }
  // One entry per layer, its calls in order; entries in Keras's
  // model.layers order.
  llvm::StringMap<json::Object> entryOf;
  for (SymbolicNode *node : order.nodes) {
    Layer layer(node->layer);
    json::Array args;
    for (const Tensor &t : node->inputs)
      args.push_back(kerasTensor(t, order));
    // MultiHeadAttention takes query, value (, key) as positional
    // arguments, the merge layers one list, a keras.ops node its tensor and
    // its number in order.
    json::Object kwargs;
    if (usesCausalMask(layer))
      kwargs["use_causal_mask"] = true;
    json::Array callArgs;
    if (std::optional<ScalarOperand> number = scalarOperandOf(layer)) {
      if (number->first)
        callArgs.push_back(number->value);
      callArgs.push_back(std::move(args[0]));
      if (!number->first)
        callArgs.push_back(number->value);
    } else if (node->inputs.size() == 1) {
      callArgs.push_back(std::move(args[0]));
    } else if (layer.className() == "Softmax") {
      // Softmax()(x, mask=m).
      callArgs.push_back(std::move(args[0]));
      kwargs["mask"] = std::move(args[1]);
    } else if (isMultiHeadAttentionClass(layer.className())) {
      // query, value, key; the attention mask is a keyword argument.
      if (args.size() == 4) {
        kwargs["attention_mask"] = std::move(args[3]);
        args.pop_back();
      }
      callArgs = std::move(args);
    } else {
      callArgs.push_back(json::Value(std::move(args)));
    }
    json::Object call{{"args", std::move(callArgs)},
                      {"kwargs", std::move(kwargs)}};
    auto it = entryOf.find(layer.name());
    if (it == entryOf.end()) {
      json::Object e = layerEntry(layer, nodeShapes(*node));
      e["name"] = layer.name();
      e["inbound_nodes"] = json::Array{std::move(call)};
      entryOf[layer.name()] = std::move(e);
    } else {
      it->second.getArray("inbound_nodes")->push_back(std::move(call));
    }
  }
  for (const std::string &name : order.kerasLayers)
    layers.push_back(std::move(entryOf[name]));
  return json::Object{
      {"module", "keras.src.models.functional"},
      {"class_name", "Functional"},
      {"config",
       json::Object{{"name", model.name()},
                    {"trainable", true},
                    {"layers", std::move(layers)},
                    {"input_layers", refList(model.graphInputs(), order)},
                    {"output_layers", refList(model.graphOutputs(), order)}}},
      {"registered_name", "Functional"},
      {"build_config", json::Object{{"input_shape", nullptr}}}};
}

/// A keras.optimizers.schedules object as Keras 3 serializes it.
json::Object scheduleConfig(const LearningRateSchedule &s) {
  using SK = ScheduleKind;
  json::Object c;
  std::string cls, name;
  switch (s.kind) {
  case SK::ExponentialDecay:
  case SK::InverseTimeDecay:
    cls = name = s.kind == SK::ExponentialDecay ? "ExponentialDecay"
                                                : "InverseTimeDecay";
    c = json::Object{{"initial_learning_rate", s.initialLearningRate},
                     {"decay_steps", s.decaySteps},
                     {"decay_rate", s.decayRate},
                     {"staircase", s.staircase}};
    break;
  case SK::PiecewiseConstantDecay: {
    cls = "PiecewiseConstantDecay";
    name = "PiecewiseConstant";
    json::Array boundaries, values;
    for (double b : s.boundaries)
      boundaries.push_back(b);
    for (double v : s.values)
      values.push_back(v);
    c = json::Object{{"boundaries", std::move(boundaries)},
                     {"values", std::move(values)}};
    break;
  }
  case SK::PolynomialDecay:
    cls = name = "PolynomialDecay";
    c = json::Object{{"initial_learning_rate", s.initialLearningRate},
                     {"decay_steps", s.decaySteps},
                     {"end_learning_rate", s.endLearningRate},
                     {"power", s.power},
                     {"cycle", s.cycle}};
    break;
  case SK::CosineDecay:
    cls = name = "CosineDecay";
    c = json::Object{{"initial_learning_rate", s.initialLearningRate},
                     {"decay_steps", s.decaySteps},
                     {"alpha", s.alpha},
                     {"warmup_target", s.warmupTarget
                                           ? json::Value(*s.warmupTarget)
                                           : json::Value(nullptr)},
                     {"warmup_steps", s.warmupSteps}};
    break;
  case SK::CosineDecayRestarts:
    cls = "CosineDecayRestarts";
    name = "SGDRDecay";
    c = json::Object{{"initial_learning_rate", s.initialLearningRate},
                     {"first_decay_steps", s.decaySteps},
                     {"t_mul", s.tMul},
                     {"m_mul", s.mMul},
                     {"alpha", s.alpha}};
    break;
  }
  c["name"] = name;
  return json::Object{{"module", "keras.optimizers.schedules"},
                      {"class_name", cls},
                      {"config", std::move(c)},
                      {"registered_name", nullptr}};
}

/// Keras 3's optimizer config: the base keys (BaseOptimizer.get_config),
/// then the class's own, as Keras writes them. Clipping 0 is Keras's None.
json::Object optimizerConfig(const OptimizerConfig &opt) {
  auto orNull = [](double v) {
    return v != 0 ? json::Value(v) : json::Value(nullptr);
  };
  json::Value weightDecay = nullptr;
  if (opt.weightDecay)
    weightDecay = *opt.weightDecay;
  else if (opt.kind == OptimizerKind::AdamW)
    weightDecay = opt.resolvedWeightDecay();
  json::Value lr = opt.schedule ? json::Value(scheduleConfig(*opt.schedule))
                                : json::Value(opt.resolvedLearningRate());
  json::Object c{{"learning_rate", std::move(lr)},
                 {"weight_decay", std::move(weightDecay)},
                 {"clipnorm", orNull(opt.clipnorm)},
                 {"global_clipnorm", orNull(opt.globalClipnorm)},
                 {"clipvalue", orNull(opt.clipvalue)},
                 {"use_ema", false},
                 {"ema_momentum", 0.99},
                 {"ema_overwrite_frequency", nullptr},
                 {"loss_scale_factor", nullptr},
                 {"gradient_accumulation_steps", nullptr}};
  double beta2 = opt.beta2 ? *opt.beta2 : opt.resolvedBeta2();
  std::string cls, name;
  switch (opt.kind) {
  case OptimizerKind::SGD:
    cls = "SGD";
    c["momentum"] = opt.momentum;
    c["nesterov"] = opt.nesterov;
    break;
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW:
    cls = opt.kind == OptimizerKind::Adam ? "Adam" : "AdamW";
    c["beta_1"] = opt.beta1;
    c["beta_2"] = beta2;
    c["epsilon"] = opt.epsilon;
    c["amsgrad"] = opt.amsgrad;
    break;
  case OptimizerKind::RMSprop:
    cls = "RMSprop";
    c["rho"] = opt.rho;
    c["momentum"] = opt.momentum;
    c["epsilon"] = opt.epsilon;
    c["centered"] = opt.centered;
    break;
  case OptimizerKind::Adagrad:
    cls = "Adagrad";
    c["initial_accumulator_value"] = opt.initialAccumulatorValue;
    c["epsilon"] = opt.epsilon;
    break;
  case OptimizerKind::Nadam:
  case OptimizerKind::Adamax:
    cls = opt.kind == OptimizerKind::Nadam ? "Nadam" : "Adamax";
    c["beta_1"] = opt.beta1;
    c["beta_2"] = beta2;
    c["epsilon"] = opt.epsilon;
    break;
  case OptimizerKind::Lion:
    cls = "Lion";
    c["beta_1"] = opt.beta1;
    c["beta_2"] = beta2;
    break;
  }
  if (cls.empty())
    throw Error("optimizer '" + optimizerName(opt.kind).str() +
                "' has no Keras config to save");
  // Keras's default name: the class in snake case (AdamW: adam_w).
  c["name"] = toSnakeCase(cls);
  return json::Object{{"module", "keras.optimizers"},
                      {"class_name", cls},
                      {"config", std::move(c)},
                      {"registered_name", nullptr}};
}

/// A loss as compile(loss=...) records it: its function's name when every
/// argument has its default, else the Loss object with the config its
/// get_config writes (so Keras rebuilds it with the same arguments).
json::Value lossConfig(const LossConfig &loss) {
  std::string name = lossName(loss.kind).str();
  // A custom loss is saved as the built-in of its target form (as before).
  // keras.losses.get knows no categorical_generalized_cross_entropy (Keras
  // 3.15 leaves it out of ALL_OBJECTS): that loss is always the object.
  bool byName = loss.kind != LossKind::CategoricalGeneralizedCrossEntropy;
  if (!loss.custom.empty() || (byName && loss.str() == name))
    return name;
  json::Object c{{"name", lossDefaultInstanceName(loss.kind)},
                 {"reduction", lossReductionName(loss.reduction)}};
  auto axis = [&]() -> json::Value {
    std::optional<int64_t> a = loss.resolvedAxis();
    return a ? json::Value(*a) : json::Value(nullptr);
  };
  for (llvm::StringRef key : LossConfig::argumentNames(loss.kind)) {
    if (key == "from_logits")
      c["from_logits"] = loss.fromLogits;
    else if (key == "label_smoothing")
      c["label_smoothing"] = loss.labelSmoothing;
    else if (key == "axis" &&
             (loss.kind != LossKind::SparseCategoricalCrossentropy ||
              loss.resolvedAxis() != -1))
      c["axis"] = axis();
    else if (key == "ignore_class")
      c["ignore_class"] = loss.ignoreClass ? json::Value(*loss.ignoreClass)
                                           : json::Value(nullptr);
    else if (key == "delta")
      c["delta"] = loss.delta;
    else if (key == "alpha")
      c["alpha"] = loss.resolvedAlpha();
    else if (key == "beta")
      c["beta"] = loss.beta;
    else if (key == "gamma")
      c["gamma"] = loss.resolvedGamma();
    else if (key == "q")
      c["q"] = loss.q;
    else if (key == "margin")
      c["margin"] = loss.margin;
    else if (key == "remove_diagonal")
      c["remove_diagonal"] = loss.removeDiagonal;
    else if (key == "apply_class_balancing")
      c["apply_class_balancing"] = loss.applyClassBalancing;
  }
  return json::Object{{"module", "keras.losses"},
                      {"class_name", lossClassName(loss.kind)},
                      {"config", std::move(c)},
                      {"registered_name", nullptr}};
}

} // namespace

std::vector<std::string> keras::kerasLayerOrder(Model &model) {
  std::vector<std::string> names;
  if (dynamic_cast<Sequential *>(&model)) {
    for (const Layer &l : model.layers())
      names.push_back(l.name());
    return names;
  }
  return orderGraph(model).kerasLayers;
}

std::vector<std::string> keras::inputLayerNames(Model &model) {
  std::vector<std::string> names;
  llvm::StringSet<> taken;
  for (const Layer &l : model.layers())
    taken.insert(l.name());
  int next = 0;
  for (const Tensor &in : model.graphInputs()) {
    std::string name = in.node()->inputName;
    while (name.empty() || !taken.insert(name).second)
      name = next++ == 0 ? "input_layer"
                         : "input_layer_" + std::to_string(next - 1);
    names.push_back(name);
  }
  return names;
}

namespace {
/// A value of MetricConfig's text form as Keras's JSON; `asFloat` numbers
/// as floats (FBetaScore checks `isinstance(beta, float)`).
json::Value metricArgument(llvm::StringRef v, bool asFloat) {
  v = v.trim();
  if (v == "None")
    return nullptr;
  if (v == "true" || v == "false")
    return v == "true";
  if (v.starts_with("[") && v.ends_with("]")) {
    json::Array items;
    llvm::SmallVector<llvm::StringRef> parts;
    v.drop_front().drop_back().split(parts, ',', -1, false);
    for (llvm::StringRef p : parts)
      items.push_back(metricArgument(p, asFloat));
    return items;
  }
  int64_t i;
  if (!asFloat && !v.getAsInteger(10, i))
    return i;
  double d;
  if (!v.getAsDouble(d))
    return d;
  return v.str();
}

/// The metric arguments Keras takes as floats.
bool isFloatArgument(llvm::StringRef key) {
  return llvm::is_contained({"beta", "threshold", "thresholds", "recall",
                             "precision", "specificity", "sensitivity",
                             "label_weights"},
                            key);
}

/// Keras's form of each metric: a bare name as it is, one with arguments
/// (`AUC(curve=PR,name=pr_auc)`) or a class name as the metric object
/// compile_config records.
json::Array metricList(const std::vector<std::string> &names) {
  json::Array metrics;
  for (const std::string &m : names) {
    llvm::StringRef text(m);
    llvm::StringRef cls = text.split('(').first.trim();
    if (!text.contains('(') && !metricKindOfClass(cls)) {
      metrics.push_back(m);
      continue;
    }
    json::Object config;
    config["name"] = metricLogName(m).str();
    if (text.contains('(')) {
      llvm::StringRef args = text.split('(').second.rsplit(')').first;
      int depth = 0;
      size_t start = 0;
      for (size_t i = 0; i <= args.size(); ++i) {
        char c = i < args.size() ? args[i] : ',';
        depth += (c == '[') - (c == ']');
        if (c != ',' || depth > 0)
          continue;
        llvm::StringRef pair = args.slice(start, i);
        start = i + 1;
        auto [key, value] = pair.split('=');
        if (!key.trim().empty() && key.trim() != "name")
          config[key.trim()] =
              metricArgument(value, isFloatArgument(key.trim()));
      }
    }
    metrics.push_back(json::Object{{"module", "keras.metrics"},
                                   {"class_name", cls.str()},
                                   {"config", std::move(config)},
                                   {"registered_name", nullptr}});
  }
  return metrics;
}
} // namespace

json::Object keras::compileConfigJson(const TrainingConfig &training) {
  json::Value loss = nullptr, lossWeights = nullptr, metrics = nullptr;
  if (training.outputs.empty()) {
    loss = lossConfig(training.loss);
    metrics = metricList(training.metrics);
  } else {
    // Keras's dicts by output name, as compile(loss={...}) records them.
    json::Object losses, weights, perOutput;
    for (const OutputTraining &o : training.outputs) {
      losses[o.name] = lossConfig(o.loss);
      weights[o.name] = o.lossWeight;
      if (!o.metrics.empty())
        perOutput[o.name] = metricList(o.metrics);
    }
    loss = std::move(losses);
    lossWeights = std::move(weights);
    metrics = std::move(perOutput);
  }
  return json::Object{{"optimizer", optimizerConfig(training.optimizer)},
                      {"loss", std::move(loss)},
                      {"loss_weights", std::move(lossWeights)},
                      {"metrics", std::move(metrics)},
                      {"weighted_metrics", nullptr},
                      {"run_eagerly", false},
                      {"steps_per_execution", 1},
                      {"jit_compile", true}};
}

std::string
keras::kerasConfigJson(Model &model,
                       const std::optional<TrainingConfig> &training) {
  bool sequential = dynamic_cast<Sequential *>(&model) != nullptr &&
                    model.graphInputs().size() == 1;
  json::Object config =
      sequential ? sequentialConfig(model) : functionalConfig(model);
  config["compile_config"] =
      training ? compileConfigJson(*training) : json::Object{};
  return pythonJson(json::Value(std::move(config)));
}
