//===- KcImageOps.td - image resampling -*- tablegen -*-===//
//
// Keras's geometric augmentations (RandomRotation, RandomZoom,
// RandomTranslation, RandomCrop) sample each image through its own affine
// map; the sampling is one op with a kernel (runtime/kernels/
// ImageTransform.cpp) that the interpreter and compiled code both call.
//
//===----------------------------------------------------------------------===//

#ifndef KC_IMAGE_OPS_TD
#define KC_IMAGE_OPS_TD

include "ir/KcBase.td"
include "ir/KcInterfaces.td"

defvar Kc_ImageTensor = StaticShapeTensorOf<[F32, F64]>;

def Kc_ImageTransformOp : Kc_Op<"image_transform",
    [DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "samples each image at an affine map of the output pixels";
  let description = [{
    `images` is `[N, H, W, C]`, `transforms` `[N, 8]` (Keras's
    `a0 a1 a2 b0 b1 b2 c0 c1`; the projective `c0 c1` are unused, as in
    Keras's JAX backend), the result `[N, Ho, Wo, C]`: pixel `(y, x)` of
    image `n` is the input read at row `b0 x + b1 y + b2` and column
    `a0 x + a1 y + a2`, as `jax.scipy.ndimage.map_coordinates` reads it
    (`interpolation`: `nearest` or `bilinear`; `fill_mode`: `reflect`,
    `wrap`, `constant` (reads `fill_value`) or `nearest` for samples
    outside the image).

    ```mlir
    %r = kc.image_transform %x, %t {fill_mode = "reflect", fill_value = 0.0 : f64, interpolation = "bilinear"} : tensor<4x28x28x1xf32>, tensor<4x8xf32> -> tensor<4x28x28x1xf32>
    ```
  }];
  let arguments = (ins Kc_ImageTensor:$images, Kc_ImageTensor:$transforms,
                       StrAttr:$interpolation, StrAttr:$fill_mode,
                       F64Attr:$fill_value);
  let results = (outs Kc_ImageTensor:$result);
  let assemblyFormat = [{
    $images `,` $transforms attr-dict `:` type($images) `,` type($transforms) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_ImageTransformGradOp : Kc_Op<"image_transform_grad"> {
  let summary = "gradient of image_transform with respect to its images";
  let description = [{
    The transpose of `image_transform`'s sampling: each `grad_output`
    element is added to the input pixels its sample read, with the weights
    it read them with (fill values receive nothing). The result has the
    images' type; the attributes are the forward op's.

    ```mlir
    %d = kc.image_transform_grad %t, %g {fill_mode = "reflect", fill_value = 0.0 : f64, interpolation = "bilinear"} : tensor<4x8xf32>, tensor<4x28x28x1xf32> -> tensor<4x28x28x1xf32>
    ```
  }];
  let arguments = (ins Kc_ImageTensor:$transforms, Kc_ImageTensor:$grad_output,
                       StrAttr:$interpolation, StrAttr:$fill_mode,
                       F64Attr:$fill_value);
  let results = (outs Kc_ImageTensor:$result);
  let assemblyFormat = [{
    $transforms `,` $grad_output attr-dict `:` type($transforms) `,` type($grad_output) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KC_IMAGE_OPS_TD
