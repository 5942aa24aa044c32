//===- Layer.h - Keras-style layers: the base classes -----------*- C++ -*-===//
//
// A layer is a handle (kcc::Layer) to shared state (kcc::LayerImpl), so
// layers can be passed by value as in Keras -- `Sequential({Dense(128,
// "relu"), Dense(10)})` -- while a model and the user's variable refer to
// the same weights.
//
// A layer owns its weights. They are declared on the first call, from the
// input shapes (Keras's build()), and materialized lazily: the first time
// their values are needed (an eager call, Model::parameters(), a trace) they
// are drawn from the layer's initializer with a stream derived from
// (model seed, layer name, weight name). Values therefore depend neither on
// call order nor on how many other layers exist.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_LAYER_H
#define KCC_FRONTEND_LAYER_H

#include "frontend/Masks.h"
#include "frontend/Tensor.h"

#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kcc {

/// Keras's L1, L2 and L1L2 regularizers: the penalty
/// l1 * sum(|w|) + l2 * sum(w^2), each term only when its factor is not 0.
struct Regularizer {
  double l1 = 0;
  double l2 = 0;
  /// keras.regularizers.L1 and L2 with Keras's default factor.
  static Regularizer L1(double l1 = 0.01) { return {l1, 0}; }
  static Regularizer L2(double l2 = 0.01) { return {0, l2}; }
  static Regularizer L1L2(double l1 = 0, double l2 = 0) { return {l1, l2}; }
};

/// `r`'s penalty of `x` as a rank-0 tensor of x's kind and dtype, summed
/// as Keras's L1L2.__call__ does.
Tensor regularizationPenalty(const Tensor &x, const Regularizer &r);

/// One weight of a layer ("kernel", "bias").
struct Weight {
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
  std::string initializer;
  /// Whether the optimizer updates it: declared trainable (not
  /// BatchNormalization's moving statistics) and its layer not frozen.
  bool trainable = true;
  /// As the layer declared it, whatever LayerImpl::setTrainable says.
  bool declaredTrainable = true;
  /// Keras's `<name>_regularizer`: its penalty joins the training loss
  /// while the weight is trainable (Keras 3 regularizes trainable weights
  /// only).
  std::optional<Regularizer> regularizer;
  /// Undefined until materialized.
  NDArray value;
};

/// What a call sees besides its inputs.
struct CallContext {
  /// Training mode: Dropout is active.
  bool training = false;
  /// Rank-0 I64 step counter feeding counter-based randomness (concrete in
  /// eager mode, the @forward step argument when traced). Undefined means 0.
  Tensor step;
};

class LayerImpl : public std::enable_shared_from_this<LayerImpl> {
public:
  explicit LayerImpl(std::string className);
  virtual ~LayerImpl();

  /// "Dense".
  const std::string &className() const { return className_; }
  /// The user's name, the name a model gave it, or snake_case(className).
  const std::string &name() const { return name_; }
  /// Fixes the name (a model names a layer once; later models keep it).
  void setName(std::string name);
  bool hasName() const { return named_; }

  /// Keras's input_shape argument (batch excluded), if given.
  const std::optional<Shape> &inputShape() const { return inputShape_; }
  void setInputShape(Shape shape) { inputShape_ = std::move(shape); }

  /// Seed of the weight streams; set by the owning model before weights
  /// are materialized.
  uint64_t seed() const { return seed_; }
  void setSeed(uint64_t seed) { seed_ = seed; }

  bool built() const { return built_; }
  std::vector<Weight> &weights() { return weights_; }
  /// Draws every weight that has no value yet.
  void materializeWeights();
  /// Whether the layer draws random numbers when training (needs a step).
  virtual bool usesRandomness() const { return false; }
  /// Whether a training-mode call computes something else than an inference
  /// call (Dropout's mask, BatchNormalization's batch statistics), so that
  /// predict needs a @forward of its own.
  virtual bool trainingDiffers() const { return usesRandomness(); }
  /// Keras's layer.trainable. A frozen layer's weights get no gradient and
  /// no optimizer slot, and a frozen BatchNormalization runs in inference
  /// mode (Keras 3).
  bool trainable() const { return trainable_; }
  void setTrainable(bool trainable);
  /// The layer's hyper-parameters under the keys of Keras's get_config()
  /// ("units", "activation", "kernel_size", ...), with kcc's names for
  /// activations and initializers ("glorot_uniform"); name, dtype and
  /// trainable are left to the caller. What a .keras archive kcc writes
  /// records for a model built in C++.
  virtual llvm::json::Object kerasConfig() const { return {}; }

  /// The weights Keras lets this class regularize, by the names of their
  /// `<name>_regularizer` arguments ("kernel", "bias" for Dense;
  /// "depthwise", "pointwise", "bias" for SeparableConv2D).
  virtual std::vector<std::string> regularizableWeights() const { return {}; }
  /// The weight a `<name>_regularizer` argument regularizes: `name` itself
  /// unless the class names them apart (DepthwiseConv2D's "depthwise" is
  /// its "kernel").
  virtual std::string regularizedWeight(const std::string &name) const {
    return name;
  }
  /// Sets the `<name>_regularizer` (`name` one of regularizableWeights(),
  /// its weight declared or not yet); throws kcc::Error naming the choices
  /// otherwise.
  void setWeightRegularizer(const std::string &name, Regularizer r);
  /// The regularizer set for `weight`, if any.
  std::optional<Regularizer> weightRegularizer(const std::string &weight) const;
  /// Keras's activity_regularizer: the penalty of each output of a
  /// training call, divided by its batch size as Keras 3 does, joins the
  /// loss (frozen layers included).
  void setActivityRegularizer(std::optional<Regularizer> r);
  const std::optional<Regularizer> &activityRegularizer() const {
    return activity_;
  }
  /// What a call does with its inputs' masks (frontend/Masks.h); Keras's
  /// rule for the class unless the layer says otherwise.
  virtual MaskRule maskRule() const { return kerasMaskRule(className_); }

  /// Whether a saved config lists the activity regularizer (Keras's
  /// ActivityRegularization writes its own l1 and l2 instead).
  virtual bool savesActivityRegularizer() const { return true; }

  /// Keras's dtype policy: "float32" (the default) or "mixed_bfloat16"
  /// (float32 variables, bfloat16 compute: floating inputs and weights are
  /// cast to bfloat16 as the call reads them).
  const std::string &dtypePolicy() const { return dtypePolicy_; }
  /// Sets the policy; throws kcc::Error for a policy kcc does not model.
  void setDTypePolicy(const std::string &policy);
  /// The dtype the layer computes in: F32, or BF16 under mixed_bfloat16.
  DType computeDType() const;

  /// Runs the layer on tensors of one kind, building it on the first call;
  /// ops inside report errors and locations under the layer's name.
  std::vector<Tensor> call(const std::vector<Tensor> &inputs,
                           const CallContext &ctx);

protected:
  /// Declares weights from the input shapes (batch dim included).
  virtual void build(const std::vector<Shape> &inputShapes) {}
  virtual std::vector<Tensor> forward(const std::vector<Tensor> &inputs,
                                      const CallContext &ctx) = 0;

  /// Declares a weight in build(); returns its index.
  size_t addWeight(std::string name, Shape shape, std::string initializer,
                   bool trainable = true);
  /// Weight `i` as a tensor of the current call's kind: concrete (its
  /// value), traced (the bound function argument) or symbolic. Under a
  /// mixed policy a floating weight is read in the compute dtype, unless
  /// `autocast` is false (Keras's add_weight(autocast=False): the
  /// normalizations read gamma, beta and the moving statistics in float32).
  Tensor weight(size_t i, bool autocast = true);
  /// Keras's `layer.autocast`: whether call() casts floating inputs to the
  /// compute dtype (LayerNormalization turns it off and upcasts itself).
  virtual bool autocastsInputs() const { return true; }
  /// Gives weight `i` a new value computed by a training-mode call (a
  /// non-trainable statistic): eager calls overwrite the value; a trace
  /// records it (traceForward returns it as the weight's update); symbolic
  /// calls ignore it.
  void assignWeight(size_t i, const Tensor &value);
  /// `shape` for messages: "[None, ...]" while called on symbolic tensors.
  std::string shapeString(const Shape &shape) const;
  /// Throws kcc::Error "layer 'NAME' (Class): message".
  [[noreturn]] void fail(const std::string &message) const;
  /// Checks the number of inputs.
  void expectInputs(const std::vector<Tensor> &inputs, size_t n) const;

private:
  /// Gives `outputs` the masks maskRule() says (or refuses a mask).
  std::vector<Tensor> applyMaskRule(const std::vector<Tensor> &inputs,
                                    std::vector<Tensor> outputs);

  std::string className_;
  std::string name_;
  bool named_ = false;
  std::optional<Shape> inputShape_;
  uint64_t seed_ = 0;
  bool built_ = false;
  bool trainable_ = true;
  std::vector<Weight> weights_;
  std::string dtypePolicy_ = "float32";
  std::vector<std::pair<std::string, Regularizer>> regularizers_;
  std::optional<Regularizer> activity_;
  Tensor::Kind callKind_ = Tensor::Kind::Concrete;
};

/// The user-facing handle.
class Layer {
public:
  explicit Layer(std::shared_ptr<LayerImpl> impl);

  /// Calls the layer (eager on concrete tensors, a graph node on symbolic
  /// ones, kc ops while tracing).
  Tensor operator()(const Tensor &x, bool training = false) const;
  /// For merge layers (Add) and multi-input layers.
  Tensor operator()(const std::vector<Tensor> &xs, bool training = false) const;
  std::vector<Tensor> call(const std::vector<Tensor> &xs,
                           const CallContext &ctx) const;

  /// Sets the name; returns the same layer (chainable).
  Layer named(std::string name) const;
  /// Keras's input_shape (batch excluded); returns the same layer.
  Layer withInputShape(Shape shape) const;
  /// Keras's `layer.trainable = false` (fine-tuning); returns the same
  /// layer.
  Layer setTrainable(bool trainable) const;
  /// Keras's `<name>_regularizer=` ("kernel", "bias", "embeddings",
  /// "beta", "gamma", "depthwise", "pointwise"); returns the same layer.
  Layer withRegularizer(const std::string &weight, Regularizer r) const;
  /// Keras's `dtype=` policy ("float32", "mixed_bfloat16"); returns the
  /// same layer.
  Layer withDTypePolicy(const std::string &policy) const;
  /// Keras's `activity_regularizer=`; returns the same layer.
  Layer withActivityRegularizer(Regularizer r) const;
  bool trainable() const { return impl_->trainable(); }

  const std::string &name() const { return impl_->name(); }
  const std::string &className() const { return impl_->className(); }
  bool built() const { return impl_->built(); }

  /// Values of the weights (materialized), in declaration order.
  std::vector<NDArray> getWeights() const;
  /// Replaces the weights; shapes and dtypes must match.
  void setWeights(const std::vector<NDArray> &values) const;

  const std::shared_ptr<LayerImpl> &impl() const { return impl_; }

private:
  std::shared_ptr<LayerImpl> impl_;
};

/// "Conv2D" -> "conv2d", "MaxPooling2D" -> "max_pooling2d" (Keras's rule).
std::string toSnakeCase(const std::string &className);

/// The prefix of a layer's default name and of its group in a weights
/// file: toSnakeCase of its Python class, which Keras exports under
/// another class_name in one case ("GroupQueryAttention" is class
/// GroupedQueryAttention: "grouped_query_attention").
std::string namePrefix(const std::string &className);

} // namespace kcc

#endif // KCC_FRONTEND_LAYER_H
