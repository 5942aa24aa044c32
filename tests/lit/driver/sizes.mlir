// Hostile sizes: each is an error that names the layer, the field or the
// flag, with exit code 1 -- never std::bad_alloc, a signal or a wrapped
// shape. sizes-address-space.mlir shows, under a cap on the address space,
// that kcc refuses an allocation it cannot make, saying how much it needs.
// RUN: rm -rf %t && split-file %s %t
//
// Keras `units` of 10^12 and `filters` of 2^40: the field is named.
// RUN: not kcc --emit=kc %t/units.json -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=UNITS
// RUN: not kcc --emit=kc %t/filters.json -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FILTERS
// An input whose element count overflows int64 (Flatten used to give
// tensor<32x0xf32>), and a Reshape that would.
// RUN: not kcc --emit=kc %t/flatten.json -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=FLATTEN
// RUN: not kcc --emit=kc %t/reshape.json -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=RESHAPE
// A weight over the per-tensor limit, and window sizes that would overflow.
// RUN: not kcc --emit=kc %t/kernel.json -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=KERNEL
// RUN: not kcc --emit=kc %t/strides.json -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=STRIDES
// The limit is configurable: 1 MiB refuses the 784x1000 kernel (3 MiB).
// RUN: env KCC_MAX_TENSOR_BYTES=1048576 not kcc --emit=kc %t/mlp.json -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=LIMIT
// RUN: kcc --emit=kc %t/mlp.json -o %t/out.mlir
//
// --batch 10^9: the traced input alone is 2.9 TiB.
// RUN: not kcc --emit=train --model=mlp --batch 1000000000 -o %t/out.mlir 2>&1 | FileCheck %s --check-prefix=BATCH
//
// A .mlir type no C header can describe (24 TiB), and no partial output.
// RUN: not kcc --emit=obj %t/huge.mlir -o %t/huge.o 2>&1 | FileCheck %s --check-prefix=HEADER
// RUN: not ls %t/huge.o %t/huge.h

// UNITS: units.json: $.config.layers[1].config.units: layer 'big' (Dense): units 1000000000000 is too large: its bias, f32[1000000000000] needs 3.6 TiB, over the limit of 1.0 TiB per tensor (KCC_MAX_TENSOR_BYTES)
// FILTERS: filters.json: $.config.layers[1].config.filters: layer 'wide' (Conv2D): filters 1099511627776 is too large: its bias, f32[1099511627776] needs 4.0 TiB
// FLATTEN: flatten.json: $.config.layers[0].config: layer 'in' (InputLayer): input shape [4294967296, 4294967296] is too large: one example, f32[1, 4294967296, 4294967296] has more than 2^63-1 elements
// FLATTEN-NOT: tensor<
// RESHAPE: reshape.json: $.config.layers[1]: layer 'r': reshape: target shape [1, 4294967296, 4294967296, 4] has more than 2^63-1 elements
// KERNEL: kernel.json: $.config.layers[2]: layer 'd' (Dense): weight 'kernel' f32[4294967296, 4096] needs 64.0 TiB, over the limit of 1.0 TiB per tensor
// STRIDES: strides.json: $.config.layers[1].config.strides: layer 'k' (Conv2D): 'strides' [9223372036854775807, 1] must hold values in [1, 2^31-1]
// LIMIT: layer 'dense' (Dense): weight 'kernel' f32[784, 1000] needs 3.0 MiB, over the limit of 1.0 MiB per tensor (KCC_MAX_TENSOR_BYTES)
// BATCH: kcc: error: {{(mlp: )?}}traceForward: input 0 of 'mlp' at batch 1000000000: f32[1000000000, 28, 28, 1] needs 2.9 TiB, over the limit of 1.0 TiB per tensor
// HEADER: kcc: error: @forward: argument #1 of type tensor<2199023255552x3xf32> cannot be described: f32[2199023255552, 3] needs 24.0 TiB, over the limit of 1.0 TiB per tensor

//--- units.json
{"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 4], "name": "in"}},
  {"class_name": "Dense", "config": {"name": "big", "units": 1000000000000}}]}}
//--- filters.json
{"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 1], "name": "in"}},
  {"class_name": "Conv2D", "config": {"name": "wide", "filters": 1099511627776, "kernel_size": [3, 3]}}]}}
//--- flatten.json
{"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 4294967296, 4294967296], "name": "in"}},
  {"class_name": "Flatten", "config": {"name": "flat"}},
  {"class_name": "Dense", "config": {"name": "d", "units": 10}}]}}
//--- reshape.json
{"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 1], "name": "in"}},
  {"class_name": "Reshape", "config": {"name": "r", "target_shape": [4294967296, 4294967296, 4]}}]}}
//--- kernel.json
{"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 65536, 65536], "name": "in"}},
  {"class_name": "Flatten", "config": {"name": "flat"}},
  {"class_name": "Dense", "config": {"name": "d", "units": 4096}}]}}
//--- strides.json
{"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 1], "name": "in"}},
  {"class_name": "Conv2D", "config": {"name": "k", "filters": 4, "kernel_size": [3, 3], "strides": [9223372036854775807, 1], "padding": "same"}}]}}
//--- mlp.json
{"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 784], "name": "in"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 1000}}]}}
//--- huge.mlir
func.func @forward(%w: tensor<3x2xf32>, %x: tensor<2199023255552x3xf32> {kc.input = 0 : i64}) -> tensor<2199023255552x2xf32> {
  %0 = kc.matmul %x, %w : tensor<2199023255552x3xf32>, tensor<3x2xf32> -> tensor<2199023255552x2xf32>
  return %0 : tensor<2199023255552x2xf32>
}
