// What `kcc --fusion-report` shows of the transformer block fixture
// (Embedding, causal MultiHeadAttention, residual Adds, LayerNormalization,
// a feed-forward, global pooling; batch 32, 40 tokens, 2 heads):
//  - the attention: the causal mask's add, the row max, exp, the row sum
//    and the division of the softmax are loop nests of one row loop over
//    the [64, 40, 40] scores, grouped into kernels by kc-fuse-loops;
//  - the residual Add and LayerNormalization (mean, variance, normalize,
//    scale-shift) are one parallel kernel forward, the second block's with
//    the global pooling too;
//  - backward, LayerNormalization's gradient fuses with the attention's.
// RUN: kcc %kcc_src/tests/fixtures/keras/sequence/seq_transformer.keras --fusion-report | FileCheck %s

// CHECK: kcc fusion report: @train_step
// CHECK: elementwise fusion (kc-fuse-elementwise)
// CHECK: [multi_head_attention] {{[0-9]+}} producers fused
// CHECK: [layer_normalization] {{[0-9]+}} producers fused
// CHECK: fusion groups (kc-fuse-loops)
// CHECK: [multi_head_attention] fusion group (rows, parallel): {{[0-9]+}} loop nests in one kernel, layers [multi_head_attention]
// CHECK-NEXT: [layer_normalization] fusion group (rows, parallel): {{[0-9]+}} loop nests in one kernel, layers [add, layer_normalization]
// CHECK-NEXT: [global_average_pooling1d] fusion group (rows, parallel): {{[0-9]+}} loop nests in one kernel, layers [add_1, layer_normalization_1, global_average_pooling1d]
// CHECK: [multi_head_attention/grad] fusion group (rows, {{serial|parallel}}): {{[0-9]+}} loop nests in one kernel, layers [layer_normalization/grad, layer_normalization, multi_head_attention/grad]
// CHECK: memory plan (kc-plan-memory)
