#!/usr/bin/env python3
"""Writes the Keras fixture of the preprocessing layers inside a model
(tests/fixtures/keras):

  preprocessing.keras  Normalization adapted on the batch (mean, variance
                       and count as weights), Resizing down (bilinear) and up
                       (nearest) and with crop_to_aspect_ratio, CenterCrop
                       (a crop, and a smaller image resized as smart_resize
                       does), Normalization with a given per-channel mean
                       and variance, one over two axes, one over no axis,
                       and an inverted one, around two convolutions;
  augmentation.keras   RandomBrightness and RandomContrast at factor 0 in
                       training (where Keras's and kcc's random streams
                       cannot differ; their value ranges still clip the
                       images, in training only), the identity in predict;
                       the noise layers GaussianNoise, GaussianDropout
                       and AlphaDropout and a Dropout with a noise_shape at
                       0; ConvNeXt's LayerScale and InceptionResNetV2's
                       CustomScaleLayer;
  color_augmentation.keras  RandomGrayscale (on one channel and on three)
                       and RandomInvert at factor 0 (AugmentationTest
                       checks their rates), RandomColorDegeneration at
                       factor (0.5, 0.5) (halfway to gray in training),
                       RandomSaturation at (0.25, 0.25) (the saturation
                       times 1/3 through Keras's HSV conversion),
                       RandomHue at 0 (RGB -> HSV -> RGB in training),
                       RandomColorJitter with one-point draws,
                       AutoContrast (in predict too), RandomSharpness at
                       (0.25, 0.25) (halfway to the blur), RandomGaussianBlur
                       on every image with one sigma,
                       and Solarization at its
                       default factors (every image inverted in training,
                       the identity in predict);
  flip_predict.keras   a RandomFlip and ConvNeXt's StochasticDepth: Keras's
                       predict (the identity) only (Keras's StochasticDepth
                       draws unseeded, which JAX cannot trace in training);

and preprocessing.json in layers.json's format (make_layer_fixtures.py):
for each, the loss of each of 5 Adam(1e-3) train_on_batch steps on make_fixtures.py's
batch, and Keras's predict on the first 4 examples before and after them.
Run as make_fixtures.py (KERAS_BACKEND=jax); it leaves the other fixtures
alone.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)
import make_vocabulary_fixtures as mv  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras.src.applications.convnext import (  # noqa: E402
    LayerScale, StochasticDepth)
from keras.src.applications.inception_resnet_v2 import (  # noqa: E402
    CustomScaleLayer)

L = keras.layers
PREDICT = 4


def preprocessing(x_batch):
    x = keras.Input((28, 28, 1))
    norm = L.Normalization()
    norm.adapt(x_batch)
    h = norm(x)
    h = L.Resizing(20, 24)(h)                              # bilinear, down
    h = L.CenterCrop(16, 18)(h)
    h = L.Conv2D(4, 3, activation="relu")(h)               # 14 x 16 x 4
    h = L.Normalization(mean=[0.1, 0.2, 0.0, 0.3],
                        variance=[1.0, 2.0, 0.5, 4.0])(h)
    h = L.Resizing(21, 32, interpolation="nearest")(h)     # up
    h = L.Resizing(12, 12, crop_to_aspect_ratio=True)(h)
    h = L.CenterCrop(14, 13)(h)                            # smaller: resized
    h = L.Normalization(axis=(1, 3), mean=0.05, variance=1.5)(h)
    h = L.Normalization(axis=None, mean=-0.1, variance=0.25, invert=True)(h)
    h = L.Conv2D(6, 3, strides=2, activation="tanh")(h)
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="preprocessing")


def augmentation():
    x = keras.Input((28, 28, 1))
    h = L.RandomBrightness(0.0, value_range=(0.0, 0.6))(x)
    h = L.RandomContrast(0.0, value_range=(0.05, 1.0))(h)
    h = L.GaussianNoise(0.0)(h)
    h = L.Conv2D(4, 3, strides=2, activation="relu")(h)
    h = L.Dropout(0.0, noise_shape=(None, 1, 1, 4))(h)
    h = LayerScale(0.5, 4)(h)
    h = CustomScaleLayer(0.17)([h, L.Conv2D(4, 1)(h)])
    h = L.GaussianDropout(0.0)(h)
    h = L.AlphaDropout(0.0)(L.Flatten()(h))
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="augmentation")


def color_augmentation():
    x = keras.Input((28, 28, 1))
    # Each image stretched to [0, 1] (in predict too). On the input: it
    # maps each image's minimum to 0 exactly, a tie at its clip, where
    # JAX's gradient of clip is 1/2 and kcc's (TensorFlow's) 1.
    h = L.AutoContrast(value_range=(0, 1))(x)
    h = L.RandomGrayscale(0.0)(h)                          # one channel
    h = L.Conv2D(3, 3, strides=2, activation="sigmoid")(h)  # "RGB" in [0, 1]
    h = L.RandomGrayscale(0.0)(h)
    h = L.RandomInvert(0.0, value_range=(0, 1))(h)
    # factor (0.5, 0.5): halfway to gray in training, in Keras's draw too.
    h = L.RandomColorDegeneration((0.5, 0.5), value_range=(0, 1))(h)
    # The same draw in Keras: the saturation times 0.25 / 0.75.
    h = L.RandomSaturation((0.25, 0.25), value_range=(0, 1))(h)
    # A shift of 0 (either sign): the HSV round trip alone.
    h = L.RandomHue(0.0, value_range=(0, 1))(h)
    # Its parts with one-point draws: brightness + 0.1 (clipped), contrast
    # 0, the saturation times 3 (clipped to 1), hue 0.
    h = L.RandomColorJitter(value_range=(0, 1), brightness_factor=(0.1, 0.1),
                            contrast_factor=0.0, saturation_factor=(0.75, 0.75),
                            hue_factor=0.0)(h)
    # Halfway to the 3x3 blur in Keras's draw too.
    h = L.RandomSharpness((0.25, 0.25), value_range=(0, 1))(h)
    # Every image blurred, 3 taps across and 5 down, sigma 0.5 (+ 1e-6).
    h = L.RandomGaussianBlur(factor=(1.0, 1.0), kernel_size=(3, 5),
                             sigma=(0.5, 0.5), value_range=(0, 1))(h)
    # Its default threshold (0) inverts every image, in training only.
    h = L.Solarization(value_range=(0, 1))(h)
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="color_augmentation")


def flip_predict():
    """RandomFlip is the identity in predict: a model with one."""
    x = keras.Input((28, 28, 1))
    h = L.RandomFlip()(x)
    h = L.Conv2D(4, 3, strides=2, activation="relu")(h)
    h = L.Add()([h, StochasticDepth(0.3)(L.Conv2D(4, 1)(h))])
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="flip_predict")


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    result = mf.record_header(PREDICT)
    for name, build in (("preprocessing", lambda: preprocessing(x)),
                        ("augmentation", augmentation),
                        ("color_augmentation", color_augmentation)):
        result[name] = mv.fixture_record(name, build, x, y)
    mf.fresh_session()
    model = flip_predict()
    model.save(os.path.join(mf.OUT, "flip_predict.keras"))
    result["flip_predict"] = {"initial_predict": np.asarray(
        model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()}
    with open(os.path.join(mf.OUT, "preprocessing.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
