//===- Model.h - Functional models and Sequential ---------------*- C++ -*-===//
//
// A Model is the graph of layer calls between symbolic inputs and outputs
// (Keras's functional API). Calling it replays the layer calls in
// topological order on tensors of any kind: concrete (eager), traced (see
// traceForward) or symbolic (a model used as a building block).
//
// Sequential is a Model whose graph is a chain, grown by add(). Its input
// shape comes from an Input tensor, from the first layer's input shape, or
// -- if neither is given -- from the first call (Keras's deferred build).
//
// Unnamed layers are named per model in graph order: dense, dense_1, ...
// The model's seed, with each layer's and weight's name, seeds the weights.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_MODEL_H
#define KCC_FRONTEND_MODEL_H

#include "frontend/Layer.h"

#include "llvm/ADT/StringSet.h"

#include <string>
#include <vector>

namespace kcc {

/// A parameter as @forward receives it.
struct Parameter {
  std::string name; ///< "dense/kernel"
  NDArray value;
  bool trainable = true;
};

class Model {
public:
  Model(std::vector<Tensor> inputs, std::vector<Tensor> outputs,
        std::string name = "model", uint64_t seed = 0);
  Model(const Tensor &input, const Tensor &output, std::string name = "model",
        uint64_t seed = 0);
  virtual ~Model();

  /// Single input and output.
  Tensor operator()(const Tensor &x, bool training = false, int64_t step = 0);
  /// Runs the graph on tensors of one kind.
  std::vector<Tensor> call(const std::vector<Tensor> &inputs,
                           const CallContext &ctx);

  const std::string &name() const { return name_; }
  uint64_t seed() const { return seed_; }
  /// Layers in graph order (each once).
  const std::vector<Layer> &layers();
  /// Keras's set_global_policy for a model already built: every layer
  /// computes under `policy` ("float32" or "mixed_bfloat16"), whatever its
  /// own dtype said. Throws kcc::Error for a policy kcc does not model.
  void setDTypePolicy(const std::string &policy);
  /// Throws kcc::Error when no layer has that name.
  Layer getLayer(const std::string &name);
  /// The graph's symbolic inputs and outputs (Keras's model.inputs and
  /// model.outputs): what a writer of the model's config walks.
  const std::vector<Tensor> &graphInputs();
  const std::vector<Tensor> &graphOutputs();
  /// Shapes of the inputs, batch excluded.
  std::vector<Shape> inputShapes();
  std::vector<DType> inputDTypes();
  /// The inputs' names (Keras's input layer names) and the names of the
  /// layers whose outputs are the model's outputs, in order: the keys of
  /// Keras's dict form of fit()'s x and y.
  std::vector<std::string> inputNames();
  std::vector<std::string> outputNames();
  /// Shapes of the outputs, batch excluded.
  std::vector<Shape> outputShapes();
  size_t numOutputs();
  /// Whether a training-mode call draws random numbers (needs a step).
  bool usesRandomness();
  /// Whether a training-mode call differs from an inference call (Dropout,
  /// BatchNormalization's batch statistics): predict then needs its own
  /// @forward.
  bool trainingDiffers();

  /// Every weight, materialized, in @forward's argument order: layers in
  /// graph order, each layer's weights in declaration order.
  std::vector<Parameter> parameters();
  /// The values alone, same order (Keras's get_weights()).
  std::vector<NDArray> getWeights();
  /// Replaces all weights (Keras's set_weights()); shapes must match.
  void setWeights(const std::vector<NDArray> &values);

  /// A Keras-like table: layer, class, output shape, #params.
  std::string summary();

protected:
  Model(std::string name, uint64_t seed);
  /// (Re)computes the topological order and names layers.
  void setGraph(std::vector<Tensor> inputs, std::vector<Tensor> outputs);
  /// Ensures the graph exists; `callInputs` are the inputs of the call
  /// that needs it, if any (Sequential builds lazily from them).
  virtual void ensureGraph(const std::vector<Tensor> *callInputs) {}
  /// Names `layer` in this model (if unnamed) and gives it the seed.
  void adopt(const Layer &layer);

  std::vector<Tensor> inputs_, outputs_;

private:
  std::string name_;
  uint64_t seed_;
  /// Layer-call nodes in topological order.
  std::vector<std::shared_ptr<SymbolicNode>> nodes_;
  std::vector<Layer> layers_;
  /// Names taken in this model (a set: models may have 100,000 layers).
  llvm::StringSet<> usedNames_;
};

/// Drops `nodes` and `tensors`, freeing the graph nodes only they keep alive
/// one by one instead of through ~SymbolicNode's recursion over its inputs,
/// which a chain of 100,000 layers turns into a stack overflow. Callers move
/// their references in.
void releaseGraph(std::vector<std::shared_ptr<SymbolicNode>> nodes,
                  std::vector<Tensor> tensors = {});

/// A Sequential entry: a layer or an Input tensor.
struct SequentialEntry {
  SequentialEntry(Layer layer) : layer(std::move(layer)) {}  // NOLINT
  SequentialEntry(Tensor input) : input(std::move(input)) {} // NOLINT
  template <typename L,
            typename = std::enable_if_t<std::is_base_of_v<Layer, L>>>
  SequentialEntry(const L &layer) : layer(Layer(layer)) {} // NOLINT
  std::optional<Layer> layer;
  Tensor input;
};

class Sequential : public Model {
public:
  explicit Sequential(std::vector<SequentialEntry> entries = {},
                      std::string name = "sequential", uint64_t seed = 0);
  ~Sequential() override;
  /// Appends a layer; with a known input shape it is built (and
  /// shape-checked) right away.
  void add(const Layer &layer);
  /// Sets the input (must come first).
  void add(const Tensor &input);

protected:
  void ensureGraph(const std::vector<Tensor> *callInputs) override;

private:
  std::vector<Layer> chain_;
  Tensor input_, output_;
};

} // namespace kcc

#endif // KCC_FRONTEND_MODEL_H
