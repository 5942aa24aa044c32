//===- Saving.h - Models back to Keras, checkpoints ------------*- C++ -*-===//
//
// The writing side of KerasImporter.h. kcc writes what Keras 3's
// saving_lib writes, so keras.saving.load_model reads it (weights and
// optimizer variables included) and kcc's importer reads it back:
//
//   config.json       the model's config and its compile_config. A model
//                     imported from a Keras 3 file keeps its original
//                     config text, compile_config replaced only when the
//                     training configuration differs from what it says; a
//                     model built in C++, a reference model or one read
//                     from a Keras 2 .h5 gets the config Keras 3 writes for
//                     its layers (Sequential or Functional).
//   metadata.json     keras_version, date_saved, and kcc's own block
//                     {"kcc": {"epoch": E, "iterations": N, "seed": "S"}}:
//                     the epochs finished (Keras's initial_epoch to resume
//                     at), the optimizer's step count and the model's seed
//                     (Dropout's streams). Keras ignores the block.
//   model.weights.h5  layers/<snake_case class>[_N]/vars/<i> per layer in
//                     model.layers order, the "name" attribute on each
//                     vars/ group (a nested model's layers one level down:
//                     layers/functional/layers/dense/vars/<i>);
//                     optimizer/vars/<i> in Keras's order (iterations,
//                     learning_rate unless a schedule sets it, then the slots
//                     as Keras's build() adds them: kerasStateOrder in
//                     config/OptimizerSlots.h, over the trainable weights in
//                     Keras's layer order).
//
// Every write goes to a temporary file next to the destination, renamed
// over it when complete (runtime/data/AtomicFile.h): a kill or an error
// mid-save leaves the previous file as it was.
//
//   // frontend/training/Checkpoint.h moves state to and from an Executable:
//   keras::saveKerasArchive("ckpt.keras", model, captureState(exe, 1),
//                           config);
//   ...
//   keras::Checkpoint ckpt = keras::loadCheckpoint("ckpt.keras");
//   Executable exe = jit(*ckpt.imported.model, *ckpt.imported.training);
//   restoreState(exe, ckpt);       // optimizer variables and iterations
//   // resume at epoch ckpt.epoch
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_SAVING_H
#define KCC_FRONTEND_KERAS_SAVING_H

#include "config/TrainingConfig.h"
#include "frontend/Model.h"
#include "frontend/keras/KerasImporter.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kcc {
namespace keras {

/// The optimizer's variables, as an Executable holds them.
struct OptimizerState {
  /// Executable::getOptimizerState(): per trainable weight (in
  /// Model::parameters() order) its slots (Adam: m, v).
  std::vector<NDArray> slots;
  /// Steps taken (Executable::iterations()).
  int64_t iterations = 0;
  /// The learning rate the next step uses (Executable::learningRate()).
  double learningRate = 0;
};

/// What is saved besides the model's structure.
struct ModelState {
  /// Every weight in Model::parameters() order (Executable::getWeights()).
  std::vector<NDArray> weights;
  /// Absent: no optimizer/ group (an inference-only save).
  std::optional<OptimizerState> optimizer;
  /// Epochs finished: where a resumed fit starts (initial_epoch).
  int64_t epoch = 0;
};

/// Keras 3's config for `model` (Keras's model.get_config() wrapped as
/// to_json() writes it), with `training` as compile_config ({} without).
/// Throws kcc::Error for a layer Keras config cannot describe.
std::string kerasConfigJson(Model &model,
                            const std::optional<TrainingConfig> &training);

/// The names of `model`'s layers (InputLayers left out) in the order of
/// Keras's model.layers for the config kcc writes: a Sequential's chain; a
/// Functional's layers by depth from the outputs, deepest first, ties by
/// first visit from the outputs (keras/src/ops/function.py map_graph).
/// Weight groups are numbered in this order, as Keras numbers them.
std::vector<std::string> kerasLayerOrder(Model &model);

/// The InputLayer names of `model`'s inputs: each input's own name, else
/// Keras's input_layer, input_layer_1, ...
std::vector<std::string> inputLayerNames(Model &model);

/// Keras 3's compile_config for `training`.
llvm::json::Object compileConfigJson(const TrainingConfig &training);

/// Writes a .keras archive of `model` with `state`'s weights (the model's
/// own are not changed) and `training` as its compile config.
void saveKerasArchive(const std::string &path, Model &model,
                      const ModelState &state,
                      const std::optional<TrainingConfig> &training);

/// The same for an imported model: a Keras 3 source keeps its config text
/// (see above); a Keras 2 source is written as Keras 3. `training`
/// defaults to what the source's compile config said.
void saveKerasArchive(
    const std::string &path, const ImportedModel &imported,
    const ModelState &state,
    const std::optional<TrainingConfig> &training = std::nullopt);

/// Writes weights alone (and the optimizer's variables if `state` has
/// them) in the layout of Keras 3's model.save_weights("x.weights.h5").
void saveWeightsH5(const std::string &path, Model &model,
                   const ModelState &state);
/// Imported models name their layer groups in the spec's layer order.
void saveWeightsH5(const std::string &path, const ImportedModel &imported,
                   const ModelState &state);

/// A .keras archive read back for inference or to resume training.
struct Checkpoint {
  /// The model, its saved weights loaded, and its compile config.
  ImportedModel imported;
  /// Present when the archive holds optimizer variables of a trained
  /// optimizer: the step count from kcc's metadata block, or in an archive
  /// Keras wrote, from Keras's `iterations` variable.
  std::optional<OptimizerState> optimizer;
  /// Epochs finished (0 for archives Keras wrote).
  int64_t epoch = 0;

  /// The file, for messages.
  std::string source;
};

/// Reads a .keras archive (kcc's or Keras's): model, weights, optimizer
/// variables (checked against the model's trainable weights: the count of
/// slots per weight and every shape) and the epoch. Errors name the file
/// and the HDF5 path.
/// The model's seed (what Dropout without a seed draws from) is the one
/// saved in kcc's metadata unless `seed` is given (0 for Keras's archives).
Checkpoint loadCheckpoint(const std::string &path,
                          std::optional<uint64_t> seed = std::nullopt);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_SAVING_H
