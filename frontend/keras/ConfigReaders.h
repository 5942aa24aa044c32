//===- ConfigReaders.h - Reading Keras layer config fields ------*- C++ -*-===//
//
// The field readers every layer family shares: dtypes, activations,
// initializers, regularizers, widths, windows and paddings, each checking
// its value and failing at the field's JSON path with what kcc accepts.
// The layer families (frontend/keras/layers/) build their layers with them.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_CONFIGREADERS_H
#define KCC_FRONTEND_KERAS_CONFIGREADERS_H

#include "frontend/keras/LayerSpecs.h"

#include <initializer_list>
#include <optional>
#include <string>

namespace kcc {
namespace keras {

/// Only float32 is supported: a string ("float32") or a dtype policy object
/// (Keras 3 DTypePolicy, Keras 2 Policy) whose config names it.
DType readDType(const ObjectView &config, llvm::StringRef key = "dtype");

/// A layer's dtype policy: "float32" or "mixed_bfloat16", from a string
/// (Keras 2's "mixed_bfloat16") or a policy object (Keras 3 DTypePolicy,
/// Keras 2 Policy) whose config names it; float32 when absent.
std::string readDTypePolicy(const ObjectView &config,
                            llvm::StringRef key = "dtype");

/// An InputLayer's dtype: float32, or int32 / int64 ids (Embedding).
DType readInputDType(const ObjectView &config);

/// data_format: channels_last (the only layout kcc layers have), or absent.
void checkChannelsLast(const ObjectView &config);

/// Regularizers change the loss and constraints the update: kcc has
/// neither, so a non-null one is an error rather than silently dropped.
void checkNull(const ObjectView &config,
               std::initializer_list<llvm::StringRef> keys);

/// A `<weight>_regularizer` / `activity_regularizer` field: null, Keras's
/// names ("l1", "l2": factor 0.01; "l1_l2": Keras 3's L1L2(), no penalty,
/// Keras 2's l1_l2(), 0.01 each) or a serialized L1, L2 or L1L2.
std::optional<Regularizer> readRegularizer(const ObjectView &config,
                                           llvm::StringRef key);

/// Sets the regularizers of `weights` ("kernel" reads kernel_regularizer)
/// and the activity regularizer the config names on `layer`.
Layer withRegularizers(const ObjectView &config, Layer layer,
                       std::initializer_list<const char *> weights);

/// The activation named by `key`; `dflt` when absent, required when empty.
std::string readActivationAt(const ObjectView &config, llvm::StringRef key,
                             llvm::StringRef dflt);

/// The layer's `activation` ("linear" when absent, unless `required`).
std::string readActivation(const ObjectView &config, bool required = false);

/// A string ("glorot_uniform", "random_normal": Keras's defaults) or an
/// object ({"class_name": "RandomNormal", "config": {"mean": 0.0,
/// "stddev": 0.02, "seed": null}}) as kcc's text form (init::Initializer);
/// seeds are ignored, kcc draws its own streams.
std::string readInitializer(const ObjectView &config, llvm::StringRef key,
                            llvm::StringRef dflt);

/// A layer width (`units`, `filters`): positive, and a vector of that many
/// floats (the bias, one row of the output) within the per-tensor limit, so
/// a spec asking for 10^12 units fails here, at its field.
int64_t readWidth(const ObjectView &config, llvm::StringRef key);

/// A Size2 field (kernel_size, strides, pool_size): each entry positive
/// and below 2^31, far above any image yet small enough that window
/// arithmetic on it cannot overflow.
Size2 checkedSize2(const ObjectView &config, llvm::StringRef key, Size2 s);

/// `padding`: "valid" (the default) or "same", in any case.
std::string readPadding(const ObjectView &config);

/// A finite number >= 0 (Keras's ReLU, LeakyReLU arguments).
double readNonNegative(const ObjectView &c, llvm::StringRef key, double dflt);

/// A 1-D window field (kernel_size, strides, pool_size, dilation_rate,
/// size): an int or a one-element list, in [1, 2^31-1].
int64_t readSize1(const ObjectView &c, llvm::StringRef key,
                  std::optional<int64_t> dflt);

/// A 3-D window field (kernel_size, strides, pool_size, dilation_rate,
/// size): an int or a list of three, each in [1, 2^31-1].
Size3 readSize3(const ObjectView &c, llvm::StringRef key,
                std::optional<Size3> dflt);

/// An int or a list of ints (null entries, Keras's None, read as -1);
/// empty when absent.
Shape readIntOrShape(const ObjectView &c, llvm::StringRef key);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_CONFIGREADERS_H
