#!/usr/bin/env python3
"""Writes the Keras fixtures of TimeDistributed and the 3-D layers
(tests/fixtures/keras):

  td_dense.keras       the image as 4 steps of 7 rows: TimeDistributed(Dense)
                       twice, then Flatten;
  td_video.keras       a video classifier: the image as 4 frames of 7x28x1,
                       TimeDistributed(Conv2D),
                       TimeDistributed(BatchNormalization) (momentum 0.5:
                       each frame's statistics move the moving ones in
                       turn), TimeDistributed(MaxPooling2D),
                       TimeDistributed(GlobalAveragePooling2D) on one branch
                       and TimeDistributed(Flatten) on the other, joined into
                       an LSTM;
  td_sequential.keras  TimeDistributed of a small Sequential (Conv2D,
                       Flatten, Dense) on the frames, then a GRU;
  volume.keras         the image as a 4x7x28x1 volume through Conv3D (same
                       padding, strided; valid, dilated), ZeroPadding3D,
                       Cropping3D, MaxPooling3D (same), AveragePooling3D
                       (same, a partial window), Conv3DTranspose (strided
                       same; dilated; strided valid, the stride above the
                       kernel), UpSampling3D and both global 3-D poolings;
  volume_dropout.keras a Conv3D's channels through SpatialDropout3D at
                       rate 0 (where Keras's and kcc's random streams
                       cannot differ; LayersTest checks the rate);
  conv_lstm.keras      the image as 4 frames of 7x28x1 through ConvLSTM2D
                       (same padding, the sequence) and a strided one going
                       backwards with relu, hard_sigmoid and its states; as
                       4 steps of 7 columns x 28 channels through a dilated
                       ConvLSTM1D; as 2 steps of a 2x7x28 volume through
                       ConvLSTM3D (no unit_forget_bias);

and shape3d.json in layers.json's format (make_layer_fixtures.py): the loss
of each of 5 Adam(1e-3) train_on_batch steps on make_fixtures.py's batch and
Keras's predict on the first 4 examples before and after them. Run as
make_fixtures.py (KERAS_BACKEND=jax); it leaves the other fixtures alone,
and given model names, the other models of this script too.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (sets KERAS_BACKEND=jax first)
import make_batchnorm_fixtures as mb  # noqa: E402

import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers
PREDICT = 4


def td_dense():
    x = keras.Input((28, 28, 1))
    h = L.Reshape((4, 7 * 28))(x)
    h = L.TimeDistributed(L.Dense(16, activation="relu"))(h)
    h = L.TimeDistributed(L.Dense(8, activation="tanh"))(h)
    y = L.Dense(10, activation="softmax")(L.Flatten()(h))
    return keras.Model(x, y, name="td_dense")


def td_video():
    x = keras.Input((28, 28, 1))
    frames = L.Reshape((4, 7, 28, 1))(x)
    h = L.TimeDistributed(L.Conv2D(6, 3, padding="same",
                                   activation="relu"))(frames)
    # Batch statistics per frame, the moving ones updated frame by frame.
    h = L.TimeDistributed(L.BatchNormalization(momentum=0.5))(h)
    h = L.TimeDistributed(L.MaxPooling2D((1, 2)))(h)         # 4 x 7x14x6
    pooled = L.TimeDistributed(L.GlobalAveragePooling2D())(h)  # 4 x 6
    flat = L.TimeDistributed(L.Flatten())(h)                  # 4 x 588
    flat = L.TimeDistributed(L.Dense(10, activation="relu"))(flat)
    h = L.Concatenate()([pooled, flat])
    h = L.LSTM(12)(h)
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="td_video")


def td_sequential():
    x = keras.Input((28, 28, 1))
    frames = L.Reshape((4, 7, 28, 1))(x)
    frame_model = keras.Sequential([
        keras.Input((7, 28, 1)),
        L.Conv2D(4, 3, strides=(1, 2), activation="relu"),
        L.Flatten(),
        L.Dense(12, activation="tanh"),
    ], name="frame_encoder")
    h = L.TimeDistributed(frame_model)(frames)
    h = L.GRU(8)(h)
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="td_sequential")


def volume():
    x = keras.Input((28, 28, 1))
    v = L.Reshape((4, 7, 28, 1))(x)
    h = L.Conv3D(4, 3, strides=(1, 1, 2), padding="same",
                 activation="relu")(v)                      # 4x7x14x4
    h = L.ZeroPadding3D(((1, 0), (1, 1), (0, 2)))(h)           # 5x9x16x4
    h = L.Conv3D(6, (2, 3, 3), dilation_rate=(1, 1, 2),
                 activation="tanh")(h)                       # 4x7x12x6
    h = L.Cropping3D(((0, 1), (1, 0), (1, 1)))(h)              # 3x6x10x6
    a = L.MaxPooling3D((2, 2, 3), padding="same")(h)           # 2x3x4x6
    b = L.AveragePooling3D((2, 3, 2), strides=(1, 2, 2),
                           padding="same")(h)                # 3x3x5x6
    c = L.Conv3DTranspose(3, (3, 2, 3), strides=(2, 1, 2), padding="same",
                          activation="relu")(a)              # 4x3x8x3
    c = L.Conv3DTranspose(2, (2, 3, 2), dilation_rate=(2, 1, 1),
                          padding="same")(c)                 # 4x3x8x2
    c = L.Conv3DTranspose(2, 2, strides=(3, 1, 1))(c)          # 12x4x9x2
    a = L.UpSampling3D((2, 1, 1))(a)                           # 4x3x4x6
    ga = L.GlobalMaxPooling3D()(a)
    gb = L.GlobalAveragePooling3D()(b)
    gc = L.GlobalAveragePooling3D()(c)
    h = L.Concatenate()([ga, gb, gc, L.Flatten()(b)])
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="volume")


def volume_dropout():
    x = keras.Input((28, 28, 1))
    v = L.Reshape((4, 7, 28, 1))(x)
    h = L.Conv3D(5, (2, 3, 3), activation="relu")(v)          # 3x5x26x5
    h = L.SpatialDropout3D(0.0)(h)
    y = L.Dense(10, activation="softmax")(L.GlobalAveragePooling3D()(h))
    return keras.Model(x, y, name="volume_dropout")


def conv_lstm():
    x = keras.Input((28, 28, 1))
    frames = L.Reshape((4, 7, 28, 1))(x)
    h = L.ConvLSTM2D(4, 3, padding="same", return_sequences=True)(frames)
    out, _, c = L.ConvLSTM2D(3, (3, 3), strides=(1, 2), go_backwards=True,
                             return_state=True, activation="relu",
                             recurrent_activation="hard_sigmoid")(h)  # 5x13x3
    rows = L.ConvLSTM1D(5, 3, dilation_rate=2)(L.Reshape((4, 7, 28))(x))
    volume = L.ConvLSTM3D(2, (2, 3, 3), padding="same",
                          unit_forget_bias=False)(
        L.Reshape((2, 2, 7, 28, 1))(x))                       # 2x7x28x2
    h = L.Concatenate()([L.Flatten()(out), L.Flatten()(c), L.Flatten()(rows),
                         L.GlobalAveragePooling3D()(volume)])
    y = L.Dense(10, activation="softmax")(h)
    return keras.Model(x, y, name="conv_lstm")


MODELS = {"td_dense": td_dense, "td_video": td_video,
          "td_sequential": td_sequential, "volume": volume,
          "volume_dropout": volume_dropout, "conv_lstm": conv_lstm}


def main():
    os.makedirs(mf.OUT, exist_ok=True)
    _, x, y = mf.batch()
    # Names on the command line: only those, the others' records kept.
    only = sys.argv[1:]
    path = os.path.join(mf.OUT, "shape3d.json")
    result = mf.record_header(PREDICT)
    if only:
        with open(path) as f:
            result = json.load(f)
    for name, build in MODELS.items():
        if only and name not in only:
            continue
        mf.fresh_session()
        model = build()
        model.save(os.path.join(mf.OUT, name + ".keras"))
        initial = np.asarray(model.predict(x[:PREDICT], verbose=0))
        # Only train_on_batch: a direct training call would move the
        # moving statistics of td_video's BatchNormalization once more.
        rec = mb.train_record(model, x, y)
        rec["initial_predict"] = initial.astype(np.float64).tolist()
        rec["final_predict"] = np.asarray(
            model.predict(x[:PREDICT], verbose=0)).astype(np.float64).tolist()
        result[name] = rec
        print(name, "losses", rec["step_losses"])
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
