//===- Model.cpp - Functional models and Sequential -----------------------===//

#include "frontend/Model.h"
#include "frontend/Ops.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace kcc;

namespace {
std::string withoutBatch(const Shape &s) {
  std::string str = shapeToString(Shape(s.begin() + 1, s.end()));
  return "[None" + std::string(s.size() > 1 ? ", " : "") + str.substr(1);
}
} // namespace

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

Model::Model(std::string name, uint64_t seed)
    : name_(std::move(name)), seed_(seed) {}

Model::Model(std::vector<Tensor> inputs, std::vector<Tensor> outputs,
             std::string name, uint64_t seed)
    : Model(std::move(name), seed) {
  setGraph(std::move(inputs), std::move(outputs));
}

Model::Model(const Tensor &input, const Tensor &output, std::string name,
             uint64_t seed)
    : Model(std::vector<Tensor>{input}, std::vector<Tensor>{output},
            std::move(name), seed) {}

void kcc::releaseGraph(std::vector<std::shared_ptr<SymbolicNode>> nodes,
                       std::vector<Tensor> tensors) {
  for (Tensor &t : tensors)
    if (t.node())
      nodes.push_back(t.node());
  tensors.clear();
  while (!nodes.empty()) {
    std::shared_ptr<SymbolicNode> node = std::move(nodes.back());
    nodes.pop_back();
    if (!node || node.use_count() != 1)
      continue; // Kept alive elsewhere (or by a later entry of `nodes`).
    // The last reference: hand its inputs to the worklist first, so that
    // freeing it frees nothing more.
    for (const Tensor &in : node->inputs)
      if (in.node())
        nodes.push_back(in.node());
    node->inputs.clear();
  }
}

Model::~Model() {
  std::vector<Tensor> ends = std::move(outputs_);
  ends.insert(ends.end(), inputs_.begin(), inputs_.end());
  inputs_.clear();
  releaseGraph(std::move(nodes_), std::move(ends));
}

void Model::adopt(const Layer &layer) {
  LayerImpl &impl = *layer.impl();
  if (!impl.hasName()) {
    // Keras's per-prefix counter: dense, dense_1, dense_2, ...
    std::string base = namePrefix(impl.className()), name = base;
    for (int i = 1; usedNames_.contains(name); ++i)
      name = base + "_" + std::to_string(i);
    impl.setName(name);
  }
  usedNames_.insert(impl.name());
  bool materialized = llvm::any_of(
      impl.weights(), [](const Weight &w) { return w.value.defined(); });
  if (!materialized)
    impl.setSeed(seed_);
}

void Model::setGraph(std::vector<Tensor> inputs, std::vector<Tensor> outputs) {
  auto fail = [&](const std::string &msg) {
    throw Error("model '" + name_ + "': " + msg);
  };
  if (inputs.empty() || outputs.empty())
    fail("needs at least one input and one output");
  for (auto [i, in] : llvm::enumerate(inputs))
    if (!in.isSymbolic() || !in.node() || !in.node()->isInput())
      fail("input " + std::to_string(i) + " is " + in.describe() +
           ", not a kcc::Input");

  // Post-order DFS from the outputs gives a topological order of the calls;
  // an explicit stack, since a graph may be a chain of 100,000 layers.
  std::vector<std::shared_ptr<SymbolicNode>> order;
  llvm::DenseSet<SymbolicNode *> visited;
  llvm::DenseSet<SymbolicNode *> modelInputs;
  for (const Tensor &in : inputs)
    modelInputs.insert(in.node().get());
  /// A node whose inputs are pushed (`expanded`) or yet to be.
  struct Frame {
    const Tensor *tensor;
    bool expanded;
  };
  std::vector<Frame> stack;
  for (const Tensor &out : llvm::reverse(outputs))
    stack.push_back({&out, false});
  while (!stack.empty()) {
    Frame &frame = stack.back();
    const Tensor &t = *frame.tensor;
    if (frame.expanded) {
      order.push_back(t.node());
      stack.pop_back();
      continue;
    }
    if (!t.isSymbolic())
      fail("graph tensors must be symbolic, got " + t.describe());
    if (!t.node())
      fail("a tensor of shape " + shapeToString(t.shape()) +
           " comes from an op called directly on symbolic tensors; wrap the "
           "computation in a layer");
    SymbolicNode *node = t.node().get();
    if (!visited.insert(node).second) {
      stack.pop_back();
      continue;
    }
    if (node->isInput()) {
      if (!modelInputs.contains(node))
        fail("the outputs depend on an Input of shape " +
             withoutBatch(node->outputShapes[0]) +
             " that is not among the model's inputs (graph disconnected)");
      stack.pop_back();
      continue;
    }
    frame.expanded = true; // `frame` dangles once the stack grows.
    for (const Tensor &in : llvm::reverse(node->inputs))
      stack.push_back({&in, false});
  }

  std::vector<Layer> layers;
  llvm::DenseSet<LayerImpl *> seen;
  for (const auto &node : order)
    if (seen.insert(node->layer.get()).second)
      layers.push_back(Layer(node->layer));
  // Names given by the user (or an earlier model) are taken first, so an
  // unnamed Dense next to a user's "dense" becomes dense_1.
  for (const Layer &l : layers)
    if (l.impl()->hasName())
      usedNames_.insert(l.name());
  for (const Layer &l : layers)
    adopt(l);
  llvm::StringSet<> names;
  for (const Layer &l : layers)
    if (!names.insert(l.name()).second)
      fail("two layers are named '" + l.name() + "'");

  inputs_ = std::move(inputs);
  outputs_ = std::move(outputs);
  // The old graph's nodes may be the only references to a long chain.
  std::swap(nodes_, order);
  releaseGraph(std::move(order));
  layers_ = std::move(layers);
}

std::vector<Tensor> Model::call(const std::vector<Tensor> &inputs,
                                const CallContext &ctx) {
  ensureGraph(&inputs);
  if (inputs.size() != inputs_.size())
    throw Error("model '" + name_ + "' expects " +
                std::to_string(inputs_.size()) + " input(s), got " +
                std::to_string(inputs.size()));
  llvm::DenseMap<SymbolicNode *, std::vector<Tensor>> values;
  for (auto [i, in] : llvm::enumerate(inputs)) {
    const Shape &expected = inputs_[i].shape();
    bool ok = in.rank() == static_cast<int64_t>(expected.size());
    for (size_t d = 1; ok && d < expected.size(); ++d)
      ok = in.dim(d) == expected[d];
    if (!ok || in.dtype() != inputs_[i].dtype())
      throw Error("model '" + name_ + "': input " + std::to_string(i) +
                  " expects " + dtypeName(inputs_[i].dtype()) +
                  withoutBatch(expected) + ", got " + in.describe());
    values[inputs_[i].node().get()] = {in};
  }
  for (const auto &node : nodes_) {
    std::vector<Tensor> args;
    for (const Tensor &in : node->inputs)
      args.push_back(values[in.node().get()][in.outputIndex()]);
    values[node.get()] = Layer(node->layer).call(args, ctx);
  }
  std::vector<Tensor> outs;
  for (const Tensor &out : outputs_)
    outs.push_back(values[out.node().get()][out.outputIndex()]);
  return outs;
}

Tensor Model::operator()(const Tensor &x, bool training, int64_t step) {
  CallContext ctx;
  ctx.training = training;
  ctx.step = ops::full({}, static_cast<double>(step), DType::I64);
  std::vector<Tensor> outs = call({x}, ctx);
  if (outs.size() != 1)
    throw Error("model '" + name_ + "' has " + std::to_string(outs.size()) +
                " outputs; use call()");
  return outs[0];
}

const std::vector<Layer> &Model::layers() {
  ensureGraph(nullptr);
  return layers_;
}

const std::vector<Tensor> &Model::graphInputs() {
  ensureGraph(nullptr);
  return inputs_;
}

const std::vector<Tensor> &Model::graphOutputs() {
  ensureGraph(nullptr);
  return outputs_;
}

void Model::setDTypePolicy(const std::string &policy) {
  for (const Layer &layer : layers())
    layer.impl()->setDTypePolicy(policy);
}

Layer Model::getLayer(const std::string &name) {
  for (const Layer &l : layers())
    if (l.name() == name)
      return l;
  throw Error("model '" + name_ + "' has no layer named '" + name + "'");
}

std::vector<Shape> Model::inputShapes() {
  ensureGraph(nullptr);
  std::vector<Shape> shapes;
  for (const Tensor &in : inputs_)
    shapes.emplace_back(in.shape().begin() + 1, in.shape().end());
  return shapes;
}

std::vector<DType> Model::inputDTypes() {
  ensureGraph(nullptr);
  std::vector<DType> dtypes;
  for (const Tensor &in : inputs_)
    dtypes.push_back(in.dtype());
  return dtypes;
}

std::vector<std::string> Model::inputNames() {
  ensureGraph(nullptr);
  std::vector<std::string> names;
  for (const Tensor &in : inputs_)
    names.push_back(in.node() ? in.node()->inputName : std::string());
  return names;
}

std::vector<std::string> Model::outputNames() {
  ensureGraph(nullptr);
  std::vector<std::string> names;
  for (const Tensor &out : outputs_)
    names.push_back(out.node() && out.node()->layer ? out.node()->layer->name()
                                                    : std::string());
  return names;
}

std::vector<Shape> Model::outputShapes() {
  ensureGraph(nullptr);
  std::vector<Shape> shapes;
  for (const Tensor &out : outputs_)
    shapes.emplace_back(out.shape().begin() + 1, out.shape().end());
  return shapes;
}

size_t Model::numOutputs() {
  ensureGraph(nullptr);
  return outputs_.size();
}

bool Model::usesRandomness() {
  return llvm::any_of(
      layers(), [](const Layer &l) { return l.impl()->usesRandomness(); });
}

bool Model::trainingDiffers() {
  return llvm::any_of(
      layers(), [](const Layer &l) { return l.impl()->trainingDiffers(); });
}

std::vector<Parameter> Model::parameters() {
  std::vector<Parameter> params;
  for (const Layer &l : layers()) {
    l.impl()->materializeWeights();
    for (const Weight &w : l.impl()->weights())
      params.push_back({l.name() + "/" + w.name, w.value, w.trainable});
  }
  return params;
}

std::vector<NDArray> Model::getWeights() {
  std::vector<NDArray> values;
  for (Parameter &p : parameters())
    values.push_back(p.value);
  return values;
}

void Model::setWeights(const std::vector<NDArray> &values) {
  size_t total = 0;
  for (const Layer &l : layers())
    total += l.impl()->weights().size();
  if (values.size() != total)
    throw Error("model '" + name_ + "' has " + std::to_string(total) +
                " weights, got " + std::to_string(values.size()));
  size_t next = 0;
  for (const Layer &l : layers()) {
    size_t n = l.impl()->weights().size();
    l.setWeights(
        std::vector<NDArray>(values.begin() + next, values.begin() + next + n));
    next += n;
  }
}

std::string Model::summary() {
  std::string s = "Model: \"" + name_ + "\"\n";
  s += llvm::formatv("{0,-28}{1,-26}{2,12}\n", "Layer (type)", "Output Shape",
                     "Param #");
  ensureGraph(nullptr);
  int64_t total = 0;
  for (const auto &node : nodes_) {
    int64_t count = 0;
    for (const Weight &w : node->layer->weights())
      count += numElements(w.shape);
    total += count;
    std::string label =
        node->layer->name() + " (" + node->layer->className() + ")";
    s += llvm::formatv("{0,-28}{1,-26}{2,12}\n", label,
                       withoutBatch(node->outputShapes[0]), count);
  }
  s += "Total params: " + std::to_string(total) + "\n";
  return s;
}

//===----------------------------------------------------------------------===//
// Sequential
//===----------------------------------------------------------------------===//

Sequential::Sequential(std::vector<SequentialEntry> entries, std::string name,
                       uint64_t seed)
    : Model(std::move(name), seed) {
  for (SequentialEntry &e : entries) {
    if (e.layer)
      add(*e.layer);
    else
      add(e.input);
  }
}

Sequential::~Sequential() {
  // Not a braced list: its backing array would keep the nodes alive.
  std::vector<Tensor> ends;
  ends.push_back(std::move(output_));
  ends.push_back(std::move(input_));
  releaseGraph({}, std::move(ends));
}

void Sequential::add(const Tensor &input) {
  if (input_.defined() || !chain_.empty())
    throw Error("model '" + name() +
                "': an Input can only be the first entry of a Sequential");
  if (!input.isSymbolic() || !input.node() || !input.node()->isInput())
    throw Error("model '" + name() + "': expected a kcc::Input, got " +
                input.describe());
  input_ = output_ = input;
}

void Sequential::add(const Layer &layer) {
  adopt(layer);
  chain_.push_back(layer);
  if (!output_.defined() && chain_.size() == 1 && layer.impl()->inputShape())
    input_ = output_ = Input(*layer.impl()->inputShape());
  if (!output_.defined())
    return; // Deferred: built on the first call.
  try {
    // Building now shape-checks the layer as soon as it is added, as Keras
    // does when the input shape is known.
    output_ = layer(output_);
  } catch (...) {
    chain_.pop_back();
    throw;
  }
  // The graph is ordered on first use (ensureGraph): ordering it on every
  // add would make a long chain quadratic.
}

void Sequential::ensureGraph(const std::vector<Tensor> *callInputs) {
  if (output_.defined() && !chain_.empty()) {
    if (outputs_.empty() || outputs_[0].node() != output_.node())
      setGraph({input_}, {output_});
    return;
  }
  if (chain_.empty())
    throw Error("model '" + name() + "' has no layers");
  if (!callInputs || callInputs->size() != 1)
    throw Error("model '" + name() +
                "' is not built: give it an Input, an input shape on its "
                "first layer, or call it once on one tensor");
  const Tensor &x = (*callInputs)[0];
  if (x.rank() < 1)
    throw Error("model '" + name() + "' expects a batched input, got " +
                x.describe());
  Tensor input =
      Input(Shape(x.shape().begin() + 1, x.shape().end()), x.dtype());
  Tensor output = input;
  for (const Layer &l : chain_)
    output = l(output);
  input_ = input;
  output_ = output;
  setGraph({input_}, {output_});
}
