// RUN: kcc-opt %s --split-input-file --verify-diagnostics

func.func @matmul_contraction(%a: tensor<32x784xf32>, %b: tensor<785x128xf32>) {
  // expected-error @+1 {{'kc.matmul' op expects lhs columns (784) to match rhs rows (785): lhs [32, 784], rhs [785, 128]}}
  %0 = kc.matmul %a, %b : tensor<32x784xf32>, tensor<785x128xf32> -> tensor<32x128xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<2x32x784xf32>, %b: tensor<784x128xf32>) {
  // expected-error @+1 {{expects 2-D operands, got lhs [2, 32, 784] and rhs [784, 128]}}
  %0 = kc.matmul %a, %b : tensor<2x32x784xf32>, tensor<784x128xf32> -> tensor<32x128xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<32x784xf32>, %b: tensor<784x128xf32>) {
  // expected-error @+1 {{result shape [32, 64] does not match the expected [32, 128]}}
  %0 = kc.matmul %a, %b : tensor<32x784xf32>, tensor<784x128xf32> -> tensor<32x64xf32>
  return
}

// -----

func.func @broadcast_dim(%a: tensor<2x5xf32>) {
  // expected-error @+1 {{cannot broadcast [2, 5] to [3, 5]: dim 0 is 2, expected 1 or 3}}
  %0 = kc.broadcast_to %a : tensor<2x5xf32> -> tensor<3x5xf32>
  return
}

// -----

func.func @broadcast_rank(%a: tensor<2x5xf32>) {
  // expected-error @+1 {{cannot broadcast [2, 5] to the lower-rank [5]}}
  %0 = kc.broadcast_to %a : tensor<2x5xf32> -> tensor<5xf32>
  return
}

// -----

func.func @broadcast_dtype(%a: tensor<5xf32>) {
  // expected-error @+1 {{expects element type 'f32' to match 'f64'}}
  %0 = kc.broadcast_to %a : tensor<5xf32> -> tensor<3x5xf64>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape [2, 3] (6 elements) to [4] (4 elements)}}
  %0 = kc.reshape %a : tensor<2x3xf32> -> tensor<4xf32>
  return
}

// -----

func.func @transpose_perm(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [0, 0] is not a permutation of [0, 2)}}
  %0 = kc.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @transpose_rank(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{perm [0] has 1 entries for an operand of rank 2}}
  %0 = kc.transpose %a {perm = array<i64: 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+1 {{input 1 [5, 3] differs from input 0 [4, 3] in dim 0 (concat axis 1)}}
  %0 = kc.concat %a, %b {axis = 1 : i64} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{input 1 has rank 1, expected 2}}
  %0 = kc.concat %a, %b {axis = 0 : i64} : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<8x3xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = kc.concat %a {axis = 2 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @slice_bounds(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{dim 1: slice [2:9:1] is invalid for size 8}}
  %0 = kc.slice %a {start = array<i64: 0, 2>, limit = array<i64: 4, 9>, strides = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x7xf32>
  return
}

// -----

func.func @slice_entries(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{start, limit and strides need 2 entries (the operand's rank)}}
  %0 = kc.slice %a {start = array<i64: 0>, limit = array<i64: 4>, strides = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_axes_order(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axes [1, 0] must be sorted and unique}}
  %0 = kc.reduce_sum %a {axes = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_axis_range(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for an operand of rank 2}}
  %0 = kc.reduce_max %a {axes = array<i64: 2>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @reduce_keepdims(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{result shape [4] does not match the expected [4, 1]}}
  %0 = kc.reduce_mean %a {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @argmax_axis(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = kc.argmax %a {axis = -3 : i64} : tensor<4x8xf32> -> tensor<4xi64>
  return
}

// -----

func.func @one_hot_rank(%a: tensor<4xi32>) {
  // expected-error @+1 {{expects a result of rank 2 ending in the class count, got [4]}}
  %0 = kc.one_hot %a : tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @one_hot_leading(%a: tensor<4xi32>) {
  // expected-error @+1 {{result leading shape [5] does not match the expected [4]}}
  %0 = kc.one_hot %a : tensor<4xi32> -> tensor<5x10xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = kc.softmax %a {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @log_softmax_axis(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = kc.log_softmax %a {axis = -3 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @compare_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{result shape [5] does not match the expected [4]}}
  %0 = kc.compare lt, %a, %a : tensor<4xf32> -> tensor<5xi1>
  return
}

// -----

func.func @select_cond(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{cond shape [3] does not match the expected [4]}}
  %0 = kc.select %c, %a, %a : tensor<3xi1>, tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'kc.cast' op all non-scalar operands/results must have the same shape}}
  %0 = kc.cast %a : tensor<4xf32> -> tensor<5xf64>
  return
}

// -----

func.func @conv_channels(%x: tensor<8x28x28x3xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error @+1 {{expects input channels (3) to match filter input channels (1): input [8, 28, 28, 3], filter [3, 3, 1, 32]}}
  %0 = kc.conv2d %x, %w : tensor<8x28x28x3xf32>, tensor<3x3x1x32xf32> -> tensor<8x26x26x32xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<8x28x28x6xf32>, %w: tensor<3x3x2x8xf32>) {
  // expected-error @+1 {{expects input channels (6) and filters (8) to be multiples of groups (3)}}
  %0 = kc.conv2d %x, %w {groups = 3} : tensor<8x28x28x6xf32>, tensor<3x3x2x8xf32> -> tensor<8x26x26x8xf32>
  return
}

// -----

func.func @conv_group_channels(%x: tensor<8x28x28x6xf32>, %w: tensor<3x3x2x8xf32>) {
  // expected-error @+1 {{expects input channels (6) / groups (2) to match filter input channels (2)}}
  %0 = kc.conv2d %x, %w {groups = 2} : tensor<8x28x28x6xf32>, tensor<3x3x2x8xf32> -> tensor<8x26x26x8xf32>
  return
}

// -----

func.func @conv_rank(%x: tensor<28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error @+1 {{expects a 4-D NHWC input and a 4-D HWIO filter, got [28, 28, 1] and [3, 3, 1, 32]}}
  %0 = kc.conv2d %x, %w : tensor<28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x26x26x32xf32>
  return
}

// -----

func.func @conv_strides(%x: tensor<8x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error @+1 {{expects 2 strides and 2 dilations, got [2] and [1, 1]}}
  %0 = kc.conv2d %x, %w {strides = array<i64: 2>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x26x26x32xf32>
  return
}

// -----

func.func @conv_positive(%x: tensor<8x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error @+1 {{strides [0, 1] and dilations [1, 1] must be positive}}
  %0 = kc.conv2d %x, %w {strides = array<i64: 0, 1>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x26x26x32xf32>
  return
}

// -----

func.func @conv_window(%x: tensor<1x2x2x1xf32>, %w: tensor<3x3x1x4xf32>) {
  // expected-error @+1 {{window 3x3 (dilations [1, 1]) is larger than the input [1, 2, 2, 1] with valid padding}}
  %0 = kc.conv2d %x, %w : tensor<1x2x2x1xf32>, tensor<3x3x1x4xf32> -> tensor<1x1x1x4xf32>
  return
}

// -----

func.func @conv_same_shape(%x: tensor<8x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error @+1 {{result shape [8, 26, 26, 32] does not match the expected [8, 28, 28, 32]}}
  %0 = kc.conv2d %x, %w {padding = #kc<padding same>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x26x26x32xf32>
  return
}

// -----

func.func @conv_backprop_input(%dy: tensor<8x26x26x32xf32>, %w: tensor<3x3x1x32xf32>) {
  // expected-error @+1 {{grad_output shape [8, 26, 26, 32] does not match the expected [8, 28, 28, 32]}}
  %0 = kc.conv2d_backprop_input %dy, %w {padding = #kc<padding same>} : tensor<8x26x26x32xf32>, tensor<3x3x1x32xf32> -> tensor<8x28x28x1xf32>
  return
}

// -----

func.func @conv_backprop_filter(%x: tensor<8x28x28x1xf32>, %dy: tensor<8x28x28x32xf32>) {
  // expected-error @+1 {{grad_output shape [8, 28, 28, 32] does not match the expected [8, 26, 26, 32]}}
  %0 = kc.conv2d_backprop_filter %x, %dy : tensor<8x28x28x1xf32>, tensor<8x28x28x32xf32> -> tensor<3x3x1x32xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<26x26x32xf32>) {
  // expected-error @+1 {{expects a 4-D NHWC operand, got [26, 26, 32]}}
  %0 = kc.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<26x26x32xf32> -> tensor<13x13x32xf32>
  return
}

// -----

func.func @pool_window(%x: tensor<8x26x26x32xf32>) {
  // expected-error @+1 {{window [2] must have 2 positive entries}}
  %0 = kc.avg_pool2d %x {window = array<i64: 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
  return
}

// -----

func.func @max_pool_grad_result(%x: tensor<8x26x26x32xf32>, %dy: tensor<8x13x13x32xf32>) {
  // expected-error @+1 {{result shape [8, 26, 26, 16] does not match the expected [8, 26, 26, 32]}}
  %0 = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32>, tensor<8x13x13x32xf32> -> tensor<8x26x26x16xf32>
  return
}

// -----

func.func @max_pool_grad_output(%x: tensor<8x26x26x32xf32>, %dy: tensor<8x12x12x32xf32>) {
  // expected-error @+1 {{grad_output shape [8, 12, 12, 32] does not match the expected [8, 13, 13, 32]}}
  %0 = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32>, tensor<8x12x12x32xf32> -> tensor<8x26x26x32xf32>
  return
}

// -----

func.func @avg_pool_grad_output(%dy: tensor<8x12x12x32xf32>) {
  // expected-error @+1 {{grad_output shape [8, 12, 12, 32] does not match the expected [8, 13, 13, 32]}}
  %0 = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x12x12x32xf32> -> tensor<8x26x26x32xf32>
  return
}

// -----

func.func @elementwise_dtype(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %0 = kc.relu %a : tensor<4xi32>
  return
}

// -----

func.func @all_reduce_kind(%g: tensor<3x2xf32>) {
  // expected-error @+1 {{'kc.all_reduce' op expects reduction "sum" or "mean", got "max"}}
  %0 = kc.all_reduce "max" %g : tensor<3x2xf32>
  return
}

// -----

func.func @all_reduce_start_rank(%g: tensor<3x2xf32>) {
  // expected-error @+1 {{'kc.all_reduce_start' op expects a rank-1 bucket, got 'tensor<3x2xf32>'}}
  %0 = kc.all_reduce_start "mean" %g : tensor<3x2xf32>
  return
}

// -----

func.func @all_reduce_wait_unstarted(%g: tensor<6xf32>) {
  // expected-error @+1 {{'kc.all_reduce_wait' op expects its bucket to come from kc.all_reduce_start}}
  %0 = kc.all_reduce_wait "mean" %g : tensor<6xf32>
  return
}

// -----

func.func @all_reduce_wait_reduction(%g: tensor<6xf32>) {
  %0 = kc.all_reduce_start "sum" %g : tensor<6xf32>
  // expected-error @+1 {{'kc.all_reduce_wait' op reduction "mean" differs from its start's "sum"}}
  %1 = kc.all_reduce_wait "mean" %0 : tensor<6xf32>
  return
}
