//===- KerasVariables.h - kcc's state in Keras's variable order -*- C++ -*-===//
//
// A live Keras model hands its state over as flat lists: model.weights
// (layers in model.layers order, nested models depth first, a shared layer
// once; each layer's own trainable then non-trainable variables, then its
// sublayers') and model.optimizer.variables (iterations, learning_rate
// unless a schedule sets it, then the slots as the optimizer's build()
// adds them). kcc holds the same values in Model::parameters() order and
// Executable::getOptimizerState() order. These functions are the one
// mapping between the two, shared by the .keras writer and reader
// (Saving.h) and the Python package, which moves state to and from a
// keras.Model in memory.
//
//   std::vector<NDArray> w = keras::weightsFromKerasOrder(imported, list);
//   imported.model->setWeights(w);
//   list = keras::weightsToKerasOrder(imported, trainer.getWeights());
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_KERASVARIABLES_H
#define KCC_FRONTEND_KERAS_KERASVARIABLES_H

#include "config/TrainingConfig.h"
#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/Saving.h"

#include <string>
#include <vector>

namespace kcc {
namespace keras {

/// The layers of `layout` depth first, a shared layer once: Keras's
/// model.weights order by layer.
std::vector<std::string> flatLayerOrder(const std::vector<SpecLayer> &layout);

/// For each trainable weight in Keras's order -- layers in `order`
/// (Keras's model.layers), weights in declaration order, which is Keras's
/// model.trainable_variables and so its optimizer's slot order -- its
/// index among the trainable weights in Model::parameters() order (the
/// Executable's slot order). Throws kcc::Error naming `source` when the
/// order misses one.
std::vector<size_t> kerasTrainableOrder(Model &model,
                                        const std::vector<std::string> &order,
                                        const std::string &source);

/// For each of Keras's optimizer variables after `iterations` (and
/// `learning_rate`, absent under a schedule), the index of the
/// Executable's slot holding it; `perm` is kerasTrainableOrder. Without a
/// configuration the slots interleave per weight.
std::vector<size_t> kerasSlotOrder(const OptimizerConfig *optimizer,
                                   const std::vector<size_t> &perm,
                                   size_t numSlots);

/// `weights` (Model::parameters() order) in Keras's model.weights order.
std::vector<NDArray> weightsToKerasOrder(const ImportedModel &imported,
                                         const std::vector<NDArray> &weights);

/// Keras's model.weights values as Model::parameters() wants them, each
/// checked against its weight's shape and cast to its dtype; errors name
/// `source`, the layer and the weight.
std::vector<NDArray> weightsFromKerasOrder(const ImportedModel &imported,
                                           const std::vector<NDArray> &values,
                                           const std::string &source);

/// Keras's optimizer.variables for `state` under `optimizer`.
std::vector<NDArray> optimizerToKerasOrder(const ImportedModel &imported,
                                           const OptimizerConfig &optimizer,
                                           const OptimizerState &state);

/// The reverse: Keras's optimizer.variables (of a built optimizer) as an
/// Executable's state. Errors name `source` and the variable's index.
OptimizerState optimizerFromKerasOrder(const ImportedModel &imported,
                                       const OptimizerConfig &optimizer,
                                       const std::vector<NDArray> &variables,
                                       const std::string &source);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_KERASVARIABLES_H
