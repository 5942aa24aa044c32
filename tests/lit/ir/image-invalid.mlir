// RUN: kcc-opt %s --split-input-file --verify-diagnostics

func.func @images_rank(%x: tensor<4x28x28xf32>, %t: tensor<4x8xf32>) {
  // expected-error @+1 {{expects images [batch, height, width, channels], got [4, 28, 28]}}
  %0 = kc.image_transform %x, %t {fill_mode = "reflect", fill_value = 0.0 : f64, interpolation = "bilinear"} : tensor<4x28x28xf32>, tensor<4x8xf32> -> tensor<4x28x28xf32>
  return
}

// -----

func.func @transforms_shape(%x: tensor<4x28x28x1xf32>, %t: tensor<4x6xf32>) {
  // expected-error @+1 {{expects transforms [4, 8], got [4, 6]}}
  %0 = kc.image_transform %x, %t {fill_mode = "reflect", fill_value = 0.0 : f64, interpolation = "bilinear"} : tensor<4x28x28x1xf32>, tensor<4x6xf32> -> tensor<4x28x28x1xf32>
  return
}

// -----

func.func @result_channels(%x: tensor<4x28x28x1xf32>, %t: tensor<4x8xf32>) {
  // expected-error @+1 {{expects sampled images [4, height, width, 1], got [4, 28, 28, 3]}}
  %0 = kc.image_transform %x, %t {fill_mode = "reflect", fill_value = 0.0 : f64, interpolation = "bilinear"} : tensor<4x28x28x1xf32>, tensor<4x8xf32> -> tensor<4x28x28x3xf32>
  return
}

// -----

func.func @fill_mode(%x: tensor<4x28x28x1xf32>, %t: tensor<4x8xf32>) {
  // expected-error @+1 {{unknown fill_mode 'mirror' (expected reflect, wrap, constant, nearest)}}
  %0 = kc.image_transform %x, %t {fill_mode = "mirror", fill_value = 0.0 : f64, interpolation = "bilinear"} : tensor<4x28x28x1xf32>, tensor<4x8xf32> -> tensor<4x28x28x1xf32>
  return
}

// -----

func.func @interpolation(%t: tensor<4x8xf32>, %g: tensor<4x28x28x1xf32>) {
  // expected-error @+1 {{unknown interpolation 'bicubic' (expected nearest, bilinear)}}
  %0 = kc.image_transform_grad %t, %g {fill_mode = "reflect", fill_value = 0.0 : f64, interpolation = "bicubic"} : tensor<4x8xf32>, tensor<4x28x28x1xf32> -> tensor<4x28x28x1xf32>
  return
}

// -----

func.func @element_type(%x: tensor<4x28x28x1xf32>, %t: tensor<4x8xf64>) {
  // expected-error @+1 {{expects element type 'f32' to match 'f64'}}
  %0 = kc.image_transform %x, %t {fill_mode = "reflect", fill_value = 0.0 : f64, interpolation = "bilinear"} : tensor<4x28x28x1xf32>, tensor<4x8xf64> -> tensor<4x28x28x1xf32>
  return
}
