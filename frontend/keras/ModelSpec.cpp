//===- ModelSpec.cpp - Sequential and functional Keras specs --------------===//
//
// Reads the model level of a spec: Sequential layer lists and functional
// graphs (Keras 3 inbound_nodes {args, kwargs} with __keras_tensor__
// keras_history triples; Keras 2 nested [name, node, tensor, kwargs] lists),
// and compile_config. The model is built by calling kcc layers on kcc
// symbolic tensors, exactly as a user of the C++ API would.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ModelSpec.h"
#include "frontend/Layers.h"
#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/LayerRegistry.h"
#include "frontend/keras/LayerSpecs.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <map>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// Rethrows a layer-API error at `path`, adding the layer unless the
/// message already names it.
[[noreturn]] void relocate(SpecReader &reader, const JsonPath &path,
                           const std::string &context, const Error &e) {
  std::string msg = e.what();
  if (msg.rfind(reader.source() + ":", 0) == 0)
    throw e;
  bool named = msg.rfind("layer '", 0) == 0 || msg.rfind("model '", 0) == 0;
  reader.fail(path, named ? "" : context, msg);
}

/// One entry of config.layers.
struct Entry {
  ObjectView view;
  std::string cls, name;
  std::optional<ObjectView> config;
};

Entry readEntry(SpecReader &reader, const json::Value &v, JsonPath path,
                bool nameRequired) {
  ObjectView view = ObjectView::of(reader, v, path, "", "a layer");
  Entry e{view, view.getString("class_name"), "", std::nullopt};
  e.config.emplace(view.child("config"));
  e.name = e.config->getString("name", view.getString("name", ""));
  if (e.name.empty() && nameRequired)
    e.config->failField("name", "missing required field 'name'");
  std::string ctx = layerContext(
      e.name.empty() ? "#" + std::to_string(path.segments().back().index)
                     : e.name,
      e.cls);
  e.view.setContext(ctx);
  e.config->setContext(ctx);
  // A package's class (registered_name "package>Class") is Python code
  // unless the program registered a C++ class for it.
  std::optional<llvm::StringRef> reg;
  if (const json::Value *r = view.get("registered_name"))
    reg = r->getAsString();
  if (reg && *reg != e.cls) {
    if (!findRegisteredLayerClass(*reg))
      e.view.failField("registered_name",
                       "custom layer '" + reg->str() +
                           "' is Python code, which kcc cannot run; from C++ "
                           "register a layer class for it with "
                           "kcc::keras::registerLayerClass "
                           "(examples/embed/custom_layer.cpp)");
    e.cls = reg->str();
    return e;
  }
  checkBuiltin(e.view, e.cls);
  return e;
}

void freezeIfNeeded(const BuiltLayer &b) {
  if (!b.trainable)
    b.layer.setTrainable(false);
}

bool isSequentialClass(const std::string &cls) {
  return cls == "Sequential" || cls == "Pipeline";
}

/// A model used as a layer: its calls replay its layer calls into the
/// calling model's graph, so its layers (and their weights) become the
/// outer model's, shared by every call.
struct NestedModel {
  std::unique_ptr<Model> model;
  SpecLayer spec;
};

std::unique_ptr<Model> readSequential(SpecReader &reader, const ObjectView &top,
                                      const ObjectView &config,
                                      const json::Array &layers,
                                      const JsonPath &layersPath,
                                      std::vector<SpecLayer> &level,
                                      uint64_t seed);
std::unique_ptr<Model>
readFunctional(SpecReader &reader, const ObjectView &config,
               const json::Array &layers, const JsonPath &layersPath,
               std::vector<SpecLayer> &level, uint64_t seed);

/// The model of entry `e` (class Sequential, Pipeline, Functional or Model),
/// its layers frozen when its config says trainable: false (Keras's
/// `base.trainable = False` freezes every layer under it).
std::shared_ptr<NestedModel> readNestedModel(SpecReader &reader, const Entry &e,
                                             uint64_t seed) {
  const json::Value *layersValue = e.config->get("layers");
  if (!layersValue || !layersValue->getAsArray())
    e.config->failField("layers", "a nested model needs a list of 'layers'");
  JsonPath layersPath = e.config->path().field("layers");
  auto nested = std::make_shared<NestedModel>();
  nested->spec.name = e.name;
  nested->spec.className = isSequentialClass(e.cls) ? e.cls : "Functional";
  const json::Array &layers = *layersValue->getAsArray();
  nested->model = isSequentialClass(e.cls)
                      ? readSequential(reader, e.view, *e.config, layers,
                                       layersPath, nested->spec.layers, seed)
                      : readFunctional(reader, *e.config, layers, layersPath,
                                       nested->spec.layers, seed);
  if (!e.config->getBool("trainable", true))
    for (const Layer &l : nested->model->layers())
      l.setTrainable(false);
  return nested;
}

/// A call's own `training` argument where the Keras that wrote the node
/// honours it. tf.keras (Keras 2, nodes as reference lists) keeps an
/// explicit training=False on a call (a base model in inference mode
/// inside fit); Keras 3 (nodes as {args, kwargs}) passes the outer call's
/// mode over it (functional.py operation_fn), and kcc's step and predict
/// always give one, so a Keras 3 node's value is never used, as in Keras.
std::optional<bool> readTrainingArgument(SpecReader &reader,
                                         const json::Object *kwargs,
                                         const JsonPath &at,
                                         const std::string &context,
                                         bool keras3Node) {
  if (keras3Node || !kwargs)
    return std::nullopt;
  ObjectView view(reader, *kwargs, at, context);
  const json::Value *v = view.get("training");
  if (!v)
    return std::nullopt;
  std::optional<bool> b = v->getAsBoolean();
  if (!b)
    view.failField("training", "training must be true, false or null");
  return b;
}

//===----------------------------------------------------------------------===//
// Sequential
//===----------------------------------------------------------------------===//

/// The shape (without the batch) of the first tensor a nested model's
/// first Keras 3 call passes it: a legacy .h5's model_config gives a
/// Pipeline neither an InputLayer nor a build_config.
std::optional<Shape> firstCallShape(const ObjectView &entry) {
  const json::Array *nodes = entry.object().getArray("inbound_nodes");
  const json::Object *node =
      nodes && !nodes->empty() ? (*nodes)[0].getAsObject() : nullptr;
  const json::Array *args = node ? node->getArray("args") : nullptr;
  const json::Object *tensor =
      args && !args->empty() ? (*args)[0].getAsObject() : nullptr;
  const json::Object *config = tensor ? tensor->getObject("config") : nullptr;
  const json::Array *dims = config ? config->getArray("shape") : nullptr;
  if (!dims || dims->empty())
    return std::nullopt;
  Shape shape;
  for (const json::Value &d : llvm::drop_begin(*dims)) {
    std::optional<int64_t> n = d.getAsInteger();
    if (!n || *n <= 0)
      return std::nullopt;
    shape.push_back(*n);
  }
  return shape;
}

std::unique_ptr<Model> readSequential(SpecReader &reader, const ObjectView &top,
                                      const ObjectView &config,
                                      const json::Array &layers,
                                      const JsonPath &layersPath,
                                      std::vector<SpecLayer> &level,
                                      uint64_t seed) {
  std::string name = config.getString("name", "sequential");
  auto model =
      std::make_unique<Sequential>(std::vector<SequentialEntry>{}, name, seed);
  // Once a model is among the layers, the chain continues as a functional
  // graph from the Sequential's output so far (a kcc::Sequential chains
  // layers only).
  Tensor declaredInput, chainInput, chainOutput;
  llvm::StringSet<> names;
  bool haveInput = false;
  for (auto [i, v] : llvm::enumerate(layers)) {
    JsonPath path = layersPath.index(i);
    Entry e = readEntry(reader, v, path, /*nameRequired=*/false);
    if (e.cls == "InputLayer") {
      if (haveInput || i != 0)
        e.view.fail("an InputLayer can only be the first layer of a "
                    "Sequential model");
      InputSpec in = readInputLayer(*e.config);
      declaredInput = Input(in.shape, in.dtype, in.name);
      model->add(declaredInput);
      haveInput = true;
      continue;
    }
    if (!haveInput) {
      // No InputLayer: Keras 2 puts batch_input_shape on the first layer,
      // Keras 3 build_input_shape on the model (or build_config on it).
      std::optional<Shape> shape = readBatchInputShape(*e.config);
      if (!shape && config.has("build_input_shape")) {
        Shape s = config.getShape("build_input_shape");
        if (!s.empty())
          shape = Shape(s.begin() + 1, s.end());
      }
      if (!shape && top.has("build_config")) {
        ObjectView bc = top.child("build_config");
        if (bc.has("input_shape")) {
          Shape s = bc.getShape("input_shape");
          if (!s.empty())
            shape = Shape(s.begin() + 1, s.end());
        }
      }
      if (!shape)
        shape = firstCallShape(top);
      if (!shape)
        e.view.fail("the model has no input shape (no InputLayer, "
                    "batch_input_shape or build_input_shape)");
      declaredInput = Input(*shape, DType::F32, "input_layer");
      model->add(declaredInput);
      haveInput = true;
    }
    if (!e.name.empty() && !names.insert(e.name).second)
      e.view.fail("two layers are named '" + e.name + "'");
    if (isModelClass(e.cls) && !chainOutput.defined()) {
      chainInput = chainOutput = declaredInput;
      if (!level.empty())
        chainOutput = model->graphOutputs()[0];
    }
    if (isModelClass(e.cls)) {
      std::shared_ptr<NestedModel> nested = readNestedModel(reader, e, seed);
      try {
        chainOutput = nested->model->call({chainOutput}, CallContext{})[0];
      } catch (const Error &err) {
        relocate(reader, path, e.view.context(), err);
      }
      level.push_back(nested->spec);
      continue;
    }
    BuiltLayer b = buildLayer(*e.config, e.cls, e.name);
    try {
      if (chainOutput.defined())
        chainOutput = b.layer(chainOutput);
      else
        model->add(b.layer);
    } catch (const Error &err) {
      relocate(reader, path, e.view.context(), err);
    }
    freezeIfNeeded(b);
    level.push_back({b.layer.name(), b.layer.className(), {}});
  }
  if (level.empty())
    reader.fail(layersPath, "model '" + name + "'", "the model has no layers");
  if (!chainOutput.defined())
    return model;
  try {
    return std::make_unique<Model>(chainInput, chainOutput, name, seed);
  } catch (const Error &err) {
    relocate(reader, config.path(), "model '" + name + "'", err);
  }
}

//===----------------------------------------------------------------------===//
// Functional
//===----------------------------------------------------------------------===//

/// A (layer, node index, tensor index) reference and where it was read.
struct TensorRef {
  std::string layer;
  int64_t node = 0, tensor = 0;
  JsonPath path;
};

class GraphReader {
public:
  GraphReader(SpecReader &reader, std::string modelName, uint64_t seed)
      : reader_(reader), modelName_(std::move(modelName)), seed_(seed) {}
  /// Without a model holding them (after an error), the nodes' only
  /// references are here: free them one by one, not by recursion.
  ~GraphReader() {
    std::vector<Tensor> tensors;
    for (Slot &s : entries_)
      for (auto &node : s.nodes)
        for (Tensor &t : node.second)
          tensors.push_back(std::move(t));
    releaseGraph({}, std::move(tensors));
  }
  GraphReader(const GraphReader &) = delete;
  GraphReader &operator=(const GraphReader &) = delete;

  void addEntry(Entry e, JsonPath path) {
    if (byName_.count(e.name))
      e.view.fail("two layers are named '" + e.name + "'");
    byName_[e.name] = entries_.size();
    entries_.push_back(
        {std::move(e), std::move(path), std::nullopt, nullptr, {}});
  }

  /// A triple [name, node, tensor] (Keras 2 adds a 4th element, kwargs).
  TensorRef readRef(const json::Value &v, JsonPath path) const {
    const json::Array *a = v.getAsArray();
    TensorRef ref;
    ref.path = path;
    std::optional<llvm::StringRef> name;
    std::optional<int64_t> node, tensor;
    if (a && a->size() >= 3) {
      name = (*a)[0].getAsString();
      node = (*a)[1].getAsInteger();
      tensor = (*a)[2].getAsInteger();
    }
    if (!name || !node || !tensor)
      reader_.fail(path, modelContext(),
                   "expected a [layer name, node index, tensor index] triple");
    ref.layer = name->str();
    ref.node = *node;
    ref.tensor = *tensor;
    return ref;
  }

  /// input_layers / output_layers: a list of triples or one bare triple.
  std::vector<TensorRef> readRefList(const ObjectView &config,
                                     llvm::StringRef key) const {
    const json::Value *v = config.get(key);
    if (!v)
      config.failField(key, "missing required field '" + key + "'");
    const json::Array *a = v->getAsArray();
    JsonPath path = config.path().field(key);
    if (!a)
      reader_.fail(path, modelContext(), "'" + key + "' must be a list");
    std::vector<TensorRef> refs;
    if (!a->empty() && (*a)[0].getAsString())
      return {readRef(*v, path)};
    for (auto [i, r] : llvm::enumerate(*a))
      refs.push_back(readRef(r, path.index(i)));
    if (refs.empty())
      reader_.fail(path, modelContext(), "'" + key + "' is empty");
    return refs;
  }

  /// The tensor `ref` names, calling every layer it depends on first.
  Tensor resolve(const TensorRef &ref) {
    size_t index = slotOf(ref);
    evaluate(index, ref);
    return outputOf(index, ref);
  }
  /// Non-input layers in config order, built or not.
  std::vector<SpecLayer> layerOrder() const {
    std::vector<SpecLayer> layers;
    for (const Slot &s : entries_) {
      if (s.entry.cls == "InputLayer")
        continue;
      if (s.nested)
        layers.push_back(s.nested->spec);
      else
        layers.push_back({s.entry.name,
                          s.built ? s.built->layer.className() : s.entry.cls,
                          {},
                          static_cast<bool>(s.built)});
    }
    return layers;
  }

private:
  struct Slot {
    Entry entry;
    JsonPath path;
    std::optional<BuiltLayer> built;
    /// Set instead of `built` for a model used as a layer.
    std::shared_ptr<NestedModel> nested;
    /// Outputs per inbound node, once called; empty while in progress.
    std::map<int64_t, std::vector<Tensor>> nodes;
  };

  std::string modelContext() const { return "model '" + modelName_ + "'"; }

  size_t slotOf(const TensorRef &ref) const {
    auto it = byName_.find(ref.layer);
    if (it == byName_.end())
      reader_.fail(ref.path, modelContext(),
                   "refers to layer '" + ref.layer +
                       "', which is not in the model");
    return it->second;
  }

  /// Output `ref.tensor` of a node already called.
  Tensor outputOf(size_t index, const TensorRef &ref) {
    const Slot &slot = entries_[index];
    const std::vector<Tensor> &outs = slot.nodes.at(ref.node);
    if (ref.tensor < 0 || ref.tensor >= static_cast<int64_t>(outs.size()))
      reader_.fail(ref.path, slot.entry.view.context(),
                   "tensor index " + std::to_string(ref.tensor) +
                       " is out of range (" + std::to_string(outs.size()) +
                       " output(s))");
    return outs[ref.tensor];
  }

  /// Calls node `ref.node` of slot `index` and, first, every node it depends
  /// on: a depth-first walk on an explicit stack, since a spec may chain
  /// 100,000 layers.
  void evaluate(size_t index, const TensorRef &ref) {
    struct Frame {
      size_t slot;
      TensorRef ref;
      /// The node's arguments once its dependencies are pushed.
      std::optional<std::vector<TensorRef>> args;
    };
    std::vector<Frame> stack;
    stack.push_back({index, ref, std::nullopt});
    while (!stack.empty()) {
      Slot &slot = entries_[stack.back().slot];
      if (std::optional<std::vector<TensorRef>> args =
              std::move(stack.back().args)) {
        // Every argument is computed: call the layer.
        TensorRef at = std::move(stack.back().ref);
        stack.pop_back();
        callNode(slot, at, *args);
        continue;
      }
      const TensorRef &at = stack.back().ref;
      if (slot.entry.cls == "InputLayer") {
        inputOf(slot, at);
        stack.pop_back();
        continue;
      }
      auto done = slot.nodes.find(at.node);
      if (done != slot.nodes.end()) {
        if (done->second.empty())
          reader_.fail(at.path, slot.entry.view.context(),
                       "the graph has a cycle through layer '" +
                           slot.entry.name + "'");
        stack.pop_back();
        continue;
      }
      std::vector<TensorRef> args = readArgs(slot, at);
      slot.nodes[at.node] = {}; // In progress: meeting it again is a cycle.
      stack.back().args = args;
      // Reversed, so that arguments are computed in order.
      for (const TensorRef &a : llvm::reverse(args))
        stack.push_back({slotOf(a), a, std::nullopt});
    }
  }

  void inputOf(Slot &slot, const TensorRef &ref) {
    if (ref.node != 0)
      reader_.fail(ref.path, slot.entry.view.context(),
                   "an InputLayer has only node 0, got " +
                       std::to_string(ref.node));
    if (!slot.nodes.count(0)) {
      InputSpec in = readInputLayer(*slot.entry.config);
      slot.nodes[0] = {Input(in.shape, in.dtype, in.name)};
    }
  }

  /// The arguments of node `ref.node` of a layer (building the layer).
  std::vector<TensorRef> readArgs(Slot &slot, const TensorRef &ref) {
    const json::Value *nodes = slot.entry.view.get("inbound_nodes");
    const json::Array *list = nodes ? nodes->getAsArray() : nullptr;
    JsonPath nodesPath = slot.path.field("inbound_nodes");
    if (!list)
      reader_.fail(nodesPath, slot.entry.view.context(),
                   "missing required field 'inbound_nodes'");
    if (ref.node < 0 || ref.node >= static_cast<int64_t>(list->size()))
      reader_.fail(ref.path, slot.entry.view.context(),
                   "node index " + std::to_string(ref.node) +
                       " is out of range (layer '" + slot.entry.name +
                       "' has " + std::to_string(list->size()) + " node(s))");
    if (isModelClass(slot.entry.cls)) {
      if (!slot.nested)
        slot.nested = readNestedModel(reader_, slot.entry, seed_);
    } else if (!slot.built) {
      slot.built =
          buildLayer(*slot.entry.config, slot.entry.cls, slot.entry.name,
                     readCallOptions(slot, *list, nodesPath));
      // Frozen before its calls, which ask whether its modes differ.
      freezeIfNeeded(*slot.built);
    }
    JsonPath nodePath = nodesPath.index(ref.node);
    std::vector<TensorRef> args;
    collectArgs((*list)[ref.node], nodePath, args, isOpsNode(slot),
                slot.entry.cls == "Softmax");
    if (args.empty())
      reader_.fail(nodePath, slot.entry.view.context(),
                   "the node has no input tensors");
    return args;
  }

  /// Calls the layer of `slot` on the (computed) `args` of node `ref.node`.
  void callNode(Slot &slot, const TensorRef &ref,
                const std::vector<TensorRef> &args) {
    std::vector<Tensor> inputs;
    for (const TensorRef &a : args)
      inputs.push_back(outputOf(slotOf(a), a));
    JsonPath nodePath = slot.path.field("inbound_nodes").index(ref.node);
    const json::Value &node =
        (*slot.entry.view.get("inbound_nodes")->getAsArray())[ref.node];
    JsonPath kwargsPath = nodePath;
    const json::Object *kwargs = keras2CallKwargs(node, kwargsPath);
    // kcc runs every layer in the mode of the model's call: a call fixing
    // another mode is only the same computation when the layer's modes
    // agree (a frozen base without Dropout).
    if (readTrainingArgument(reader_, kwargs, kwargsPath,
                             slot.entry.view.context(),
                             node.getAsObject() != nullptr)) {
      bool differs = slot.nested ? slot.nested->model->trainingDiffers()
                                 : slot.built->layer.impl()->trainingDiffers();
      if (differs)
        reader_.fail(kwargsPath.field("training"), slot.entry.view.context(),
                     "a call's own training argument is not supported where "
                     "the layer's training and inference modes differ "
                     "(Dropout, a trainable BatchNormalization): kcc runs "
                     "every layer in the model's mode");
    }
    if (const json::Object *o = node.getAsObject())
      if (const json::Object *kw = o->getObject("kwargs"))
        checkMaskArguments(slot, *kw, nodePath.field("kwargs"), inputs);
    std::vector<Tensor> outs;
    try {
      outs = slot.nested ? slot.nested->model->call(inputs, CallContext{})
                         : slot.built->layer.call(inputs, CallContext{});
    } catch (const Error &err) {
      relocate(reader_, nodePath, slot.entry.view.context(), err);
    }
    slot.nodes[ref.node] = outs;
  }

  /// The call's mask keyword arguments and the input each masks.
  static std::optional<size_t> maskArgument(llvm::StringRef key) {
    return llvm::StringSwitch<std::optional<size_t>>(key)
        .Cases("mask", "query_mask", 0)
        .Case("value_mask", 1)
        .Case("key_mask", 2)
        .Default(std::nullopt);
  }

  /// Keras 3 saves the mask a layer received as a keyword argument: the
  /// output of the keras.ops node that made it (NotEqual of Embedding's
  /// ids, Any of Masking's comparison, LogicalOr of a merge layer's masks,
  /// ConvertToTensor of the query's mask that Attention passes on).
  /// kcc hands the same mask on with the tensors (Tensor::mask), so the
  /// argument must be one of those and the input must carry a mask.
  void checkMaskArguments(const Slot &slot, const json::Object &kwargs,
                          const JsonPath &at,
                          const std::vector<Tensor> &inputs) const {
    for (const auto &kv : kwargs) {
      std::optional<size_t> input = maskArgument(kv.first);
      if (!input || kv.second.kind() == json::Value::Null)
        continue;
      JsonPath path = at.field(kv.first);
      std::vector<TensorRef> refs;
      collectTensors(kv.second, path, refs);
      if (refs.size() != 1)
        reader_.fail(path, slot.entry.view.context(),
                     "expects one mask tensor");
      // Softmax's own mask argument is its second input (collectArgs).
      if (slot.entry.cls == "Softmax" && !isDerivedMask(refs[0]))
        continue;
      if (!isDerivedMask(refs[0]))
        reader_.fail(path, slot.entry.view.context(),
                     "a mask computed by '" + refs[0].layer + "' (" +
                         entries_[slotOf(refs[0])].entry.cls +
                         ") is not supported: kcc derives masks from "
                         "Embedding(mask_zero=True) and Masking only (and "
                         "Softmax takes any tensor as its mask)");
      // MultiHeadAttention's key defaults to its value.
      size_t i = *input == 2 && inputs.size() == 2 ? 1 : *input;
      if (i >= inputs.size() || !inputs[i].mask())
        reader_.fail(path, slot.entry.view.context(),
                     "the layer receives a mask that kcc does not derive for "
                     "its input " +
                         std::to_string(i) +
                         " (kcc hands on the masks of Embedding(mask_zero="
                         "True) and Masking by Keras's rules)");
    }
  }

  /// Whether `ref` is a mask Keras derived and saved as a keras.ops node
  /// (checkMaskArguments), not a tensor the model computes.
  bool isDerivedMask(const TensorRef &ref) const {
    const std::string &source = entries_[slotOf(ref)].entry.cls;
    return source == "NotEqual" || source == "Any" || source == "LogicalOr" ||
           source == "ConvertToTensor";
  }

  /// The call arguments kcc fixes per layer, from the kwargs of every
  /// Keras 3 node (they must agree: the layer is built once).
  CallOptions readCallOptions(const Slot &slot, const json::Array &nodes,
                              const JsonPath &nodesPath) const {
    CallOptions options;
    std::optional<bool> causal;
    for (auto [i, node] : llvm::enumerate(nodes)) {
      JsonPath at = nodesPath.index(i);
      if (isOpsNode(slot))
        readScalarOperand(node, at, slot, options);
      const json::Object *kwargs = keras2CallKwargs(node, at);
      if (const json::Object *o = node.getAsObject()) {
        kwargs = o->getObject("kwargs");
        at = at.field("kwargs");
      }
      if (!kwargs)
        continue;
      ObjectView view(reader_, *kwargs, at, slot.entry.view.context());
      if (view.getBool("return_attention_scores", false))
        view.failField("return_attention_scores",
                       "return_attention_scores: true is not supported");
      bool c = view.getBool("use_causal_mask", false);
      if (c && !isMultiHeadAttentionClass(slot.entry.cls) &&
          slot.entry.cls != "Attention" &&
          slot.entry.cls != "AdditiveAttention")
        view.failField("use_causal_mask",
                       "use_causal_mask is an argument of MultiHeadAttention, "
                       "GroupQueryAttention, Attention and "
                       "AdditiveAttention");
      if (causal && *causal != c)
        view.failField("use_causal_mask",
                       "the calls of one layer must agree on use_causal_mask");
      causal = c;
    }
    options.useCausalMask = causal.value_or(false);
    return options;
  }

  /// A keras.ops node's number argument beside one tensor (x + 3.0): the
  /// layer's operand, the same in every node.
  void readScalarOperand(const json::Value &node, const JsonPath &at,
                         const Slot &slot, CallOptions &options) const {
    const json::Object *o = node.getAsObject();
    const json::Array *args = o ? o->getArray("args") : nullptr;
    if (!args)
      return;
    for (auto [i, a] : llvm::enumerate(*args)) {
      std::optional<double> v = a.getAsNumber();
      if (!v)
        continue;
      if (args->size() != 2 || !std::isfinite(*v) ||
          (options.scalarOperand &&
           (*options.scalarOperand != *v || options.scalarFirst != (i == 0))))
        reader_.fail(at.field("args").index(i), slot.entry.view.context(),
                     "a number argument is supported beside one tensor, "
                     "finite and the same in every call");
      options.scalarOperand = *v;
      options.scalarFirst = i == 0;
    }
  }

  /// Keras 2's call kwargs: the 4th element of a node's first reference
  /// ([[name, node, tensor, {kwargs}], ...]); `at` becomes their path.
  static const json::Object *keras2CallKwargs(const json::Value &node,
                                              JsonPath &at) {
    const json::Array *refs = node.getAsArray();
    const json::Array *first =
        refs && !refs->empty() ? (*refs)[0].getAsArray() : nullptr;
    if (!first || first->size() < 4)
      return nullptr;
    at = at.index(0).index(3);
    return (*first)[3].getAsObject();
  }

  /// The input tensors of one inbound node, in order.
  /// Whether `slot` is an operation Keras 3 saved from a call of
  /// keras.ops on symbolic tensors (module keras.src.ops.*), whose
  /// arguments may be numbers.
  static bool isOpsNode(const Slot &slot) {
    const json::Value *m = slot.entry.view.get("module");
    std::optional<llvm::StringRef> module = m ? m->getAsString() : std::nullopt;
    return module && module->starts_with("keras.src.ops");
  }

  /// `maskInput`: the call's `mask` tensor, unless Keras derived it, is
  /// the layer's second input (Softmax).
  void collectArgs(const json::Value &node, const JsonPath &path,
                   std::vector<TensorRef> &out, bool opsNode,
                   bool maskInput) const {
    size_t first = out.size();
    // MultiHeadAttention's attention_mask is its fourth input, after the
    // key (the value when the call has none, as Keras defaults it).
    auto attentionMask = [&](TensorRef mask) {
      if (out.size() - first == 2)
        out.push_back(out[first + 1]);
      out.push_back(std::move(mask));
    };
    if (const json::Object *o = node.getAsObject()) {
      // Keras 3: {"args": [...], "kwargs": {...}}; kwargs (training=,
      // mask=) carry no tensors kcc needs.
      ObjectView view(reader_, *o, path, modelContext());
      const json::Value *args = view.get("args");
      if (!args)
        view.failField("args", "missing required field 'args'");
      if (const json::Array *list = opsNode ? args->getAsArray() : nullptr) {
        // A number argument is the layer's (CallOptions::scalarOperand).
        for (auto [i, a] : llvm::enumerate(*list))
          if (!a.getAsNumber())
            collectTensors(a, path.field("args").index(i), out);
      } else {
        collectTensors(*args, path.field("args"), out);
      }
      // MultiHeadAttention's value and key may be keyword arguments; they
      // follow the query in that order. Masks are kcc's own (Tensor::mask,
      // checked by checkMaskArguments); another tensor kwarg is an error
      // rather than ignored.
      if (const json::Object *kwargs = o->getObject("kwargs")) {
        ObjectView kw(reader_, *kwargs, path.field("kwargs"), modelContext());
        for (const char *key : {"value", "key"})
          if (const json::Value *t = kw.get(key))
            collectTensors(*t, kw.path().field(key), out);
        if (const json::Value *m = kw.get("attention_mask");
            m && m->kind() != json::Value::Null) {
          std::vector<TensorRef> mask;
          collectTensors(*m, kw.path().field("attention_mask"), mask);
          if (mask.size() != 1)
            kw.failField("attention_mask", "expects one tensor");
          attentionMask(std::move(mask[0]));
        }
        if (const json::Value *m = kw.get("mask");
            maskInput && m && m->kind() != json::Value::Null) {
          std::vector<TensorRef> mask;
          collectTensors(*m, kw.path().field("mask"), mask);
          if (mask.size() != 1)
            kw.failField("mask", "expects one tensor");
          if (!isDerivedMask(mask[0]))
            out.push_back(std::move(mask[0]));
        }
        for (const auto &kv : *kwargs) {
          llvm::StringRef key = kv.first;
          if (key == "initial_state" && kv.second.kind() != json::Value::Null)
            kw.failField(key, "initial_state is not supported (recurrent "
                              "layers start from zero states)");
          const json::Object *t = kv.second.getAsObject();
          if (key != "value" && key != "key" && key != "attention_mask" &&
              !maskArgument(key) && t &&
              t->getString("class_name") == "__keras_tensor__")
            kw.failField(key, "tensor argument '" + key.str() +
                                  "' is not supported");
        }
      }
      return;
    }
    const json::Array *a = node.getAsArray();
    if (!a)
      reader_.fail(path, modelContext(),
                   "an inbound node must be an object or a list");
    // Keras 2: [[name, node, tensor, kwargs], ...]; MultiHeadAttention's
    // value and key are references in the first one's kwargs.
    for (auto [i, r] : llvm::enumerate(*a))
      out.push_back(readRef(r, path.index(i)));
    JsonPath at = path;
    const json::Object *kwargs = keras2CallKwargs(node, at);
    if (!kwargs)
      return;
    for (const char *key : {"value", "key"})
      if (const json::Value *t = kwargs->get(key))
        out.push_back(readRef(*t, at.field(key)));
    if (const json::Value *m = kwargs->get("attention_mask");
        m && m->kind() != json::Value::Null)
      attentionMask(readRef(*m, at.field("attention_mask")));
    const json::Value *mask = maskInput ? kwargs->get("mask") : nullptr;
    if (mask && mask->kind() != json::Value::Null)
      out.push_back(readRef(*mask, at.field("mask")));
    for (const auto &kv : *kwargs) {
      llvm::StringRef key = kv.first;
      const json::Array *ref = kv.second.getAsArray();
      if (key != "value" && key != "key" && key != "attention_mask" &&
          !(maskInput && key == "mask") && ref && !ref->empty() &&
          (*ref)[0].getAsString())
        reader_.fail(at.field(key), modelContext(),
                     "tensor argument '" + key.str() +
                         "' is not supported (kcc models no masks)");
    }
  }

  void collectTensors(const json::Value &v, const JsonPath &path,
                      std::vector<TensorRef> &out) const {
    if (const json::Array *a = v.getAsArray()) {
      for (auto [i, item] : llvm::enumerate(*a))
        collectTensors(item, path.index(i), out);
      return;
    }
    ObjectView t =
        ObjectView::of(reader_, v, path, modelContext(), "a __keras_tensor__");
    if (t.getString("class_name") != "__keras_tensor__")
      t.failField("class_name", "only tensors can be layer arguments");
    ObjectView cfg = t.child("config");
    const json::Value *history = cfg.get("keras_history");
    if (!history)
      cfg.failField("keras_history", "missing required field 'keras_history'");
    out.push_back(readRef(*history, cfg.path().field("keras_history")));
  }

  SpecReader &reader_;
  std::string modelName_;
  uint64_t seed_;
  std::vector<Slot> entries_;
  llvm::StringMap<size_t> byName_;
};

std::unique_ptr<Model>
readFunctional(SpecReader &reader, const ObjectView &config,
               const json::Array &layers, const JsonPath &layersPath,
               std::vector<SpecLayer> &level, uint64_t seed) {
  std::string name = config.getString("name", "model");
  GraphReader graph(reader, name, seed);
  for (auto [i, v] : llvm::enumerate(layers))
    graph.addEntry(readEntry(reader, v, layersPath.index(i), true),
                   layersPath.index(i));
  std::vector<Tensor> inputs, outputs;
  for (const TensorRef &r : graph.readRefList(config, "input_layers"))
    inputs.push_back(graph.resolve(r));
  for (const TensorRef &r : graph.readRefList(config, "output_layers"))
    outputs.push_back(graph.resolve(r));
  std::unique_ptr<Model> model;
  try {
    model = std::make_unique<Model>(inputs, outputs, name, seed);
  } catch (const Error &err) {
    relocate(reader, config.path(), "", err);
  }
  level = graph.layerOrder();
  return model;
}

/// Keras's model.trainable_variables order: `layers` depth first, a layer
/// shared by several models once.
void flattenLayerOrder(const std::vector<SpecLayer> &layers,
                       llvm::StringSet<> &seen,
                       std::vector<std::string> &order) {
  for (const SpecLayer &l : layers) {
    if (l.isModel())
      flattenLayerOrder(l.layers, seen, order);
    else if (l.built && seen.insert(l.name).second)
      order.push_back(l.name);
  }
}

} // namespace

ImportedModel keras::readModelSpec(SpecReader &reader, const json::Value &spec,
                                   uint64_t seed) {
  ObjectView top = ObjectView::of(reader, spec, JsonPath(), "", "a model");
  std::string cls = top.getString("class_name");
  top.setContext("model (" + cls + ")");
  checkBuiltin(top, cls);
  ImportedModel out;
  // Keras 2 specs carry keras_version; Keras 3 ones the module key.
  out.kerasVersion = top.getString("keras_version", "");
  out.kerasMajorVersion = !out.kerasVersion.empty()
                              ? (out.kerasVersion[0] == '2' ? 2 : 3)
                              : (top.has("module") ? 3 : 2);
  reader.setKerasMajorVersion(out.kerasMajorVersion);
  ObjectView config = top.child("config");
  if (std::optional<llvm::StringRef> n = config.object().getString("name"))
    top.setContext("model '" + n->str() + "'");
  config.setContext(top.context());
  const json::Value *layersValue = config.get("layers");
  if (!layersValue)
    config.failField("layers", "missing required field 'layers'");
  const json::Array *layers = layersValue->getAsArray();
  JsonPath layersPath = config.path().field("layers");
  if (!layers)
    config.failField("layers", "'layers' must be a list");
  if (cls == "Sequential")
    out.model = readSequential(reader, top, config, *layers, layersPath,
                               out.specLayers, seed);
  else if (cls == "Functional" || cls == "Model")
    out.model = readFunctional(reader, config, *layers, layersPath,
                               out.specLayers, seed);
  else
    top.failField("class_name", "model class '" + cls +
                                    "' is not supported (Sequential, "
                                    "Functional or Model)");
  llvm::StringSet<> seen;
  flattenLayerOrder(out.specLayers, seen, out.specLayerOrder);
  // Keras 3 writes "compile_config": {} for a model never compiled.
  if (top.has("compile_config")) {
    ObjectView cc = top.child("compile_config");
    if (cc.has("optimizer") || cc.has("loss"))
      readCompileConfig(cc, out);
  }
  return out;
}

ImportedModel keras::importModelJson(llvm::StringRef text,
                                     llvm::StringRef sourceName,
                                     uint64_t seed) {
  json::Value spec = parseJson(text, sourceName);
  SpecReader reader(sourceName.str());
  ImportedModel imported = readModelSpec(reader, spec, seed);
  imported.configJson = text.str();
  return imported;
}
