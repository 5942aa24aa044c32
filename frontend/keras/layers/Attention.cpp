//===- Attention.cpp - Keras's attention layers --------------------------===//
//
// MultiHeadAttention, GroupQueryAttention, Attention and
// AdditiveAttention
// (keras/src/layers/attention/).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

using namespace kcc;
using namespace kcc::keras;

namespace {

/// use_gate and sliding_window, shared by MultiHeadAttention and
/// GroupQueryAttention; dropout on the scores, regularizers and
/// constraints are refused.
struct HeadOptions {
  bool gate;
  int64_t slidingWindow;
};

HeadOptions readHeadOptions(const ObjectView &c) {
  checkNull(c,
            {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
             "kernel_constraint", "bias_constraint"});
  if (c.getNumber("dropout", 0.0) != 0.0)
    c.failField("dropout", "dropout on the attention scores is not supported "
                           "(must be 0)");
  int64_t window = 0;
  if (const llvm::json::Value *w = c.get("sliding_window");
      w && w->kind() != llvm::json::Value::Null)
    window = readWidth(c, "sliding_window");
  return {c.getBool("use_gate", false), window};
}

Layer buildMultiHeadAttention(const ObjectView &c, const CallOptions &call) {
  HeadOptions head = readHeadOptions(c);
  if (c.has("attention_axes")) {
    Shape axes = readIntOrShape(c, "attention_axes");
    if (axes.size() != 1 || (axes[0] != 1 && axes[0] != -2))
      c.failField("attention_axes", "attention over axes " +
                                        shapeToString(axes) +
                                        " is not supported (only [1], the "
                                        "steps of a rank-3 input)");
  }
  int64_t heads = readWidth(c, "num_heads");
  int64_t keyDim = readWidth(c, "key_dim");
  int64_t valueDim = c.has("value_dim") ? readWidth(c, "value_dim") : keyDim;
  Shape outputShape = readIntOrShape(c, "output_shape");
  for (int64_t d : outputShape)
    if (d <= 0)
      c.failField("output_shape", "'output_shape' must hold positive sizes");
  return MultiHeadAttention(
      heads, keyDim, valueDim, c.getBool("use_bias", true), outputShape,
      call.useCausalMask,
      readInitializer(c, "kernel_initializer", "glorot_uniform"),
      readInitializer(c, "bias_initializer", "zeros"), head.gate,
      head.slidingWindow);
}

Layer buildGroupQueryAttention(const ObjectView &c, const CallOptions &call) {
  HeadOptions head = readHeadOptions(c);
  int64_t headDim = readWidth(c, "head_dim");
  int64_t queryHeads = readWidth(c, "num_query_heads");
  int64_t kvHeads = readWidth(c, "num_key_value_heads");
  if (queryHeads % kvHeads != 0)
    c.failField("num_key_value_heads",
                "num_query_heads (" + std::to_string(queryHeads) +
                    ") must be divisible by num_key_value_heads (" +
                    std::to_string(kvHeads) + ")");
  return GroupQueryAttention(
      headDim, queryHeads, kvHeads, c.getBool("use_bias", true),
      call.useCausalMask, head.gate, head.slidingWindow,
      readInitializer(c, "kernel_initializer", "glorot_uniform"),
      readInitializer(c, "bias_initializer", "zeros"));
}

/// Attention and AdditiveAttention: no dropout on the scores.
Layer buildScoreAttention(const ObjectView &c, const CallOptions &call,
                          bool additive) {
  if (c.getNumber("dropout", 0.0) != 0.0)
    c.failField("dropout", "dropout on the attention scores is not supported "
                           "(must be 0)");
  bool useScale = c.getBool("use_scale", additive);
  if (additive)
    return AdditiveAttention(useScale, call.useCausalMask);
  std::string mode = c.getString("score_mode", "dot");
  if (mode != "dot" && mode != "concat")
    c.failField("score_mode",
                "score_mode '" + mode + "' is not one of dot, concat");
  return Attention(useScale, mode, call.useCausalMask);
}

} // namespace

void keras::addAttentionLayers(std::vector<LayerClass> &classes) {
  classes.push_back(
      {"MultiHeadAttention",
       "attention",
       [](const ObjectView &c, const CallOptions &call) {
         return buildMultiHeadAttention(c, call);
       },
       {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
        "kernel_constraint", "bias_constraint", "seed"},
       {},
       "`num_heads`, `key_dim`, `value_dim`, `use_bias`, `output_shape`, "
       "`attention_axes` ([1]), `use_gate`, `sliding_window`, initializers, "
       "`use_causal_mask` and `attention_mask` in the call"});
  classes.push_back(
      {"GroupQueryAttention",
       "attention",
       [](const ObjectView &c, const CallOptions &call) {
         return buildGroupQueryAttention(c, call);
       },
       {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
        "kernel_constraint", "bias_constraint", "seed"},
       {},
       "`head_dim`, `num_query_heads`, `num_key_value_heads`, `use_bias`, "
       "`use_gate`, `sliding_window`, initializers, `use_causal_mask` and "
       "`attention_mask` in the call"});
  classes.push_back({"Attention",
                     "attention",
                     [](const ObjectView &c, const CallOptions &call) {
                       return buildScoreAttention(c, call, false);
                     },
                     {"seed"},
                     {},
                     "`use_scale`, `score_mode` (dot, concat), "
                     "`use_causal_mask` in the call; no dropout"});
  classes.push_back({"AdditiveAttention",
                     "attention",
                     [](const ObjectView &c, const CallOptions &call) {
                       return buildScoreAttention(c, call, true);
                     },
                     {"seed"},
                     {},
                     "`use_scale`, `use_causal_mask` in the call; no "
                     "dropout"});
}
