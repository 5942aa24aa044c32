// Under mixed_bfloat16, the parts Keras computes in float32 stay float32 and
// say why: BatchNormalization's moments, moving statistics and
// normalization (the bf16 input upcast, the result cast back),
// LayerNormalization likewise, MultiHeadAttention's scores and softmax
// (bf16 probabilities times the bf16 values).
// RUN: kcc --emit=kc %kcc_src/tests/fixtures/keras/mixed_bn_cnn.keras | FileCheck %s --check-prefix=BN
// RUN: kcc --emit=kc %kcc_src/tests/fixtures/keras/mixed_transformer.keras | FileCheck %s --check-prefix=MHA
// RUN: kcc --fusion-report %kcc_src/tests/fixtures/keras/mixed_bn_cnn.keras | FileCheck %s --check-prefix=BNREPORT
// RUN: kcc --fusion-report %kcc_src/tests/fixtures/keras/mixed_transformer.keras | FileCheck %s --check-prefix=REPORT

// BN-LABEL: func.func @forward
// BN: kc.conv2d {{.*}} -> tensor<32x26x26x8xbf16>
// BN: kc.cast %{{.*}} {kc.precision = "BatchNormalization moments and normalization: float32, as Keras"} : tensor<32x26x26x8xbf16> -> tensor<32x26x26x8xf32>
// BN: kc.reduce_mean {{.*}} : tensor<32x26x26x8xf32> -> tensor<8xf32>
// BN: kc.cast %{{.*}} : tensor<32x26x26x8xf32> -> tensor<32x26x26x8xbf16>

// MHA-LABEL: func.func @forward
// MHA: kc.gather {{.*}} -> tensor<32x16x16xf32>
// MHA: kc.cast %{{.*}} : tensor<32x16x16xf32> -> tensor<32x16x16xbf16>
// MHA: kc.cast %{{.*}} {kc.precision = "MultiHeadAttention scores and softmax: float32, as Keras's dot_product_attention"}
// MHA: kc.batch_matmul {{.*}} -> tensor<64x16x16xf32>
// MHA: kc.softmax {{.*}} : tensor<64x16x16xf32>
// MHA: kc.cast %{{.*}} : tensor<64x16x16xf32> -> tensor<64x16x16xbf16>
// MHA: kc.batch_matmul {{.*}} -> tensor<64x16x8xbf16>
// MHA: kc.cast %{{.*}} {kc.precision = "LayerNormalization moments and normalization: float32, as Keras"} : tensor<32x16x16xbf16> -> tensor<32x16x16xf32>

// BNREPORT: mixed precision
// BNREPORT: [batch_normalization] BatchNormalization moments and normalization: float32, as Keras
// BNREPORT: [batch_normalization_1] BatchNormalization moments and normalization: float32, as Keras

// REPORT: mixed precision
// REPORT: [multi_head_attention] {{.*}}1 f32 products (a float32 layer, or a part Keras computes in float32: see below)
// REPORT: [multi_head_attention] MultiHeadAttention scores and softmax: float32, as Keras's dot_product_attention
// REPORT: [layer_normalization] LayerNormalization moments and normalization: float32, as Keras
