//===- Tensor.h - The frontend's tensor handle ------------------*- C++ -*-===//
//
// A kcc::Tensor is what layers and ops take and return. It has a static shape
// and a dtype and is one of three kinds:
//
//  - concrete: holds an NDArray; ops on it run a kernel right away (eager);
//  - traced:   holds an mlir::Value of the function being traced; ops on it
//              append a kc op (see frontend/Trace.h);
//  - symbolic: a Keras-style KerasTensor, a node of the functional graph
//              (kcc::Input and layer calls on symbolic tensors make them).
//
// One op or layer implementation serves all three kinds, so eager results
// and traced IR cannot drift apart.
//
// Symbolic tensors carry a placeholder batch dim of 1 (Keras's `None`): the
// graph is shape-checked with it, and the real batch is only known when the
// model is called eagerly or traced with TraceOptions::batch.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TENSOR_H
#define KCC_FRONTEND_TENSOR_H

#include "runtime/Error.h"
#include "runtime/NDArray.h"

#include "mlir/IR/Value.h"

#include <memory>
#include <string>
#include <vector>

namespace kcc {

class LayerImpl;
struct SymbolicNode;

class Tensor {
public:
  enum class Kind { Undefined, Concrete, Traced, Symbolic };

  Tensor() = default;
  /// A concrete (eager) tensor sharing `array`'s storage.
  Tensor(NDArray array); // NOLINT: implicit on purpose, arrays are tensors.

  /// A value of the function being traced, with its shape and dtype.
  static Tensor traced(mlir::Value value, Shape shape, DType dtype);
  /// A graph node's output (or, with a null node, an anonymous shape-only
  /// value produced while a layer runs on symbolic inputs).
  static Tensor symbolic(Shape shape, DType dtype,
                         std::shared_ptr<SymbolicNode> node = nullptr,
                         int outputIndex = 0);

  Kind kind() const { return kind_; }
  bool defined() const { return kind_ != Kind::Undefined; }
  bool isConcrete() const { return kind_ == Kind::Concrete; }
  bool isTraced() const { return kind_ == Kind::Traced; }
  bool isSymbolic() const { return kind_ == Kind::Symbolic; }

  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i < 0 ? i + rank() : i]; }
  int64_t numel() const { return numElements(shape_); }
  DType dtype() const { return dtype_; }

  /// The eager value; throws kcc::Error unless concrete.
  const NDArray &array() const;
  /// The traced value; throws kcc::Error unless traced.
  mlir::Value value() const;
  /// The graph node (null for anonymous symbolic values).
  const std::shared_ptr<SymbolicNode> &node() const { return node_; }
  int outputIndex() const { return outputIndex_; }

  /// Elements converted to double (concrete only), for tests and printing.
  std::vector<double> toVector() const { return array().toVector(); }
  /// "[4, 10]", or "[None, 10]" for a symbolic tensor (placeholder batch).
  std::string shapeString() const;
  /// "f32[4, 10] (concrete)".
  std::string describe() const;

  /// Keras's mask (`_keras_mask`): which steps of a sequence are real, as a
  /// 0/1 tensor of the same kind, f32 [batch, steps]. Set by the layer that
  /// made the tensor (Embedding with mask_zero, Masking, a layer passing its
  /// input's mask on); copies of the tensor share it, and ops drop it.
  const Tensor *mask() const { return mask_.get(); }
  /// This tensor with `mask` (undefined: none).
  Tensor withMask(const Tensor &mask) const;
  Tensor withoutMask() const { return withMask(Tensor()); }

private:
  Kind kind_ = Kind::Undefined;
  Shape shape_;
  DType dtype_ = DType::F32;
  NDArray array_;
  mlir::Value value_;
  std::shared_ptr<SymbolicNode> node_;
  int outputIndex_ = 0;
  std::shared_ptr<const Tensor> mask_;
};

/// A node of the functional graph: either a model input or one call of a
/// layer on symbolic tensors (Keras's "Node").
struct SymbolicNode {
  /// Null for an input node.
  std::shared_ptr<LayerImpl> layer;
  std::vector<Tensor> inputs;
  /// Output shapes of the call (placeholder batch), one per output.
  std::vector<Shape> outputShapes;
  std::vector<DType> outputDTypes;
  /// For input nodes: a name ("input", "input_1", ... unless given).
  std::string inputName;
  bool isInput() const { return layer == nullptr; }
};

/// Throws kcc::Error, naming the current layer, unless a `dtype` tensor of
/// `shape` can exist: dims non-negative, element count and bytes within
/// int64 and the per-tensor limit (runtime/MemoryBudget.h). `what` leads
/// the message ("weight 'kernel'"). Every traced and symbolic tensor and
/// every eager result is checked, so no wrapped size reaches the IR.
void checkTensorSize(const Shape &shape, DType dtype,
                     const std::string &what = "");

/// A symbolic model input of `shape` (batch excluded), as keras.Input.
Tensor Input(const Shape &shape, DType dtype = DType::F32,
             const std::string &name = "");

/// The batch size symbolic tensors carry in place of Keras's `None`.
constexpr int64_t kSymbolicBatch = 1;

} // namespace kcc

#endif // KCC_FRONTEND_TENSOR_H
