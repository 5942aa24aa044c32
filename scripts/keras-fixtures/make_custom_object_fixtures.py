"""Keras archives naming custom objects kcc cannot import: a registered loss
function, a registered Loss subclass, a registered metric function and a
registered layer (tests/lit/driver/custom-objects.mlir checks the errors).

Run: KERAS_BACKEND=jax JAX_PLATFORMS=cpu python make_custom_object_fixtures.py OUT_DIR
"""
import os
import sys

import keras


@keras.saving.register_keras_serializable(package="MyPackage")
def my_loss(y_true, y_pred):
    return keras.ops.mean(keras.ops.square(y_true - y_pred), axis=-1)


@keras.saving.register_keras_serializable(package="MyPackage")
class MyLoss(keras.losses.Loss):
    def call(self, y_true, y_pred):
        return keras.ops.mean(keras.ops.abs(y_true - y_pred), axis=-1)


@keras.saving.register_keras_serializable(package="MyPackage")
def my_metric(y_true, y_pred):
    return keras.ops.mean(keras.ops.abs(y_true - y_pred), axis=-1)


@keras.saving.register_keras_serializable(package="MyPackage")
class MyDense(keras.layers.Dense):
    pass


def model(layer=keras.layers.Dense):
    keras.utils.set_random_seed(0)
    i = keras.Input((4,))
    return keras.Model(i, layer(2)(i))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cases = {
        "loss_function": (keras.layers.Dense, dict(loss=my_loss)),
        "loss_class": (keras.layers.Dense, dict(loss=MyLoss())),
        "metric_function": (keras.layers.Dense,
                            dict(loss="mse", metrics=[my_metric])),
        "layer": (MyDense, dict(loss="mse")),
    }
    for name, (layer, compile_args) in cases.items():
        m = model(layer)
        m.compile(optimizer="adam", **compile_args)
        m.save(os.path.join(out, name + ".keras"))


if __name__ == "__main__":
    main()
