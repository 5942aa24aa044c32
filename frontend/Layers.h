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
/// last axis; inputs must be rank 2 ([batch, features]).
class Dense : public Layer {
public:
  Dense(int64_t units, const std::string &activation = "linear",
        bool useBias = true,
        const std::string &kernelInitializer = "glorot_uniform",
        const std::string &biasInitializer = "zeros");
};

/// NHWC convolution with an HWIO kernel [kh, kw, cin, filters].
class Conv2D : public Layer {
public:
  Conv2D(int64_t filters, Size2 kernelSize, Size2 strides = 1,
         const std::string &padding = "valid",
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
  explicit Dropout(double rate, uint64_t seed = 0);
};

/// relu | sigmoid | tanh | softmax | gelu | linear (| log_softmax).
class Activation : public Layer {
public:
  explicit Activation(const std::string &activation);
};

class Softmax : public Layer {
public:
  explicit Softmax(int64_t axis = -1);
};

/// Sums a list of inputs of one shape (Keras's Add merge layer).
class Add : public Layer {
public:
  Add();
};

} // namespace kcc

#endif // KCC_FRONTEND_LAYERS_H
