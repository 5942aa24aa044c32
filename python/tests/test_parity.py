"""kcc.fit against Keras's model.fit: the same History for 3 epochs with
validation data, and Keras's predict after kcc.fit equal to kcc.predict."""

import keras
import numpy as np
import pytest

import kcc
from conftest import assert_history_close, twins


def mlp():
    return keras.Sequential([
        keras.Input((6,)),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(3, activation="softmax"),
    ])


def cnn():
    return keras.Sequential([
        keras.Input((6, 6, 1)),
        keras.layers.Conv2D(4, 3, activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.Flatten(),
        keras.layers.Dense(3),
    ])


def lstm():
    return keras.Sequential([
        keras.Input((5, 3)),
        keras.layers.LSTM(8),
        keras.layers.Dense(1),
    ])


def two_inputs():
    a = keras.Input((4,), name="numbers")
    b = keras.Input((3,), name="extra")
    h = keras.layers.Concatenate()([keras.layers.Dense(8, activation="tanh")(a), b])
    return keras.Model([a, b], keras.layers.Dense(1, activation="sigmoid")(h))


def data(rng, n, shape, task):
    x = rng.normal(size=(n,) + shape).astype("float32")
    if task == "classes":
        return x, rng.integers(0, 3, size=n).astype("int32")
    return x, rng.normal(size=(n, 1)).astype("float32")


CASES = {
    "mlp": (mlp, (6,), "classes",
            lambda: dict(optimizer=keras.optimizers.Adam(0.01),
                 loss="sparse_categorical_crossentropy", metrics=["accuracy"])),
    "cnn_batchnorm": (cnn, (6, 6, 1), "classes",
                      lambda: dict(
                          optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
                           loss=keras.losses.SparseCategoricalCrossentropy(
                               from_logits=True),
                           metrics=["accuracy"])),
    "lstm": (lstm, (5, 3), "values",
             lambda: dict(optimizer=keras.optimizers.RMSprop(0.01), loss="mse",
                  metrics=["mae"])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fit_history_and_predict_match_keras(case, rng):
    build, shape, task, compile_args = CASES[case]
    ours, theirs = twins(build, compile_args)
    x, y = data(rng, 40, shape, task)
    xv, yv = data(rng, 12, shape, task)
    fit = dict(batch_size=16, epochs=3, validation_data=(xv, yv),
               shuffle=False, verbose=0)  # 40 = 16 + 16 + a partial 8
    expected = theirs.fit(x, y, **fit).history
    got = kcc.fit(ours, x, y, **fit).history
    diff = assert_history_close(got, expected)
    print(f"{case}: history max |kcc - keras| = {diff:.2e}")

    predicted = kcc.predict(ours, xv)
    np.testing.assert_allclose(ours.predict(xv, verbose=0), predicted,
                               atol=1e-5, rtol=0)
    # kcc's weights are Keras's after training, within float32 rounding.
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=0)


def test_two_inputs_by_name(rng):
    ours, theirs = twins(two_inputs, lambda: dict(
        optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"]))
    x = {"numbers": rng.normal(size=(30, 4)).astype("float32"),
         "extra": rng.normal(size=(30, 3)).astype("float32")}
    y = rng.integers(0, 2, size=(30, 1)).astype("float32")
    fit = dict(batch_size=8, epochs=3, validation_split=0.2, shuffle=False,
               verbose=0)
    expected = theirs.fit(x, y, **fit).history
    got = kcc.fit(ours, x, y, **fit).history
    diff = assert_history_close(got, expected)
    print(f"two inputs: history max |kcc - keras| = {diff:.2e}")
    np.testing.assert_allclose(
        ours.predict(x, verbose=0), kcc.predict(ours, [x["numbers"], x["extra"]]),
        atol=1e-5, rtol=0)


def test_evaluate_matches_keras(rng):
    ours, _ = twins(mlp, lambda: dict(
        optimizer="adam", loss="sparse_categorical_crossentropy",
        metrics=["accuracy"]))
    x, y = data(rng, 25, (6,), "classes")
    expected = ours.evaluate(x, y, batch_size=10, verbose=0, return_dict=True)
    got = kcc.evaluate(ours, x, y, batch_size=10, return_dict=True)
    assert got.keys() == expected.keys()
    for k in expected:
        assert abs(got[k] - expected[k]) < 1e-5, k
    assert kcc.evaluate(ours, x, y)[0] == pytest.approx(expected["loss"], abs=1e-5)


@pytest.mark.parametrize("weighting", ["class_weight", "sample_weight"])
def test_weighted_fit_matches_keras(weighting, rng):
    build, shape, task, compile_args = CASES["mlp"]
    ours, theirs = twins(build, compile_args)
    x, y = data(rng, 36, shape, task)
    fit = dict(batch_size=16, epochs=3, shuffle=False, verbose=0,
               validation_data=data(rng, 10, shape, task))
    if weighting == "class_weight":
        fit["class_weight"] = {0: 0.5, 1: 2.0, 2: 1.0}
    else:
        fit["sample_weight"] = rng.uniform(0.2, 2.0, size=36).astype("float32")
    expected = theirs.fit(x, y, **fit).history
    got = kcc.fit(ours, x, y, **fit).history
    diff = assert_history_close(got, expected)
    print(f"{weighting}: history max |kcc - keras| = {diff:.2e}")


def nested_shared():
    inner = keras.Sequential([keras.Input((4,)),
                              keras.layers.Dense(6, activation="relu"),
                              keras.layers.Dense(5)], name="inner")
    shared = keras.layers.Dense(3, activation="tanh", name="shared")
    a, b = keras.Input((4,), name="a"), keras.Input((4,), name="b")
    h = keras.layers.Concatenate()([shared(inner(a)), shared(inner(b))])
    return keras.Model([a, b], keras.layers.Dense(1)(h))


def test_nested_and_shared_layers_keep_keras_weight_order(rng):
    """A nested model and a layer used twice: model.weights and the
    optimizer's slots map onto kcc's by the .keras archive's order."""
    ours, theirs = twins(nested_shared, lambda: dict(
        optimizer=keras.optimizers.Adam(0.01), loss="mse"))
    x = [rng.normal(size=(24, 4)).astype("float32") for _ in range(2)]
    y = rng.normal(size=(24, 1)).astype("float32")
    fit = dict(batch_size=8, epochs=2, shuffle=False, verbose=0)
    expected = theirs.fit(x, y, **fit).history
    got = kcc.fit(ours, x, y, **fit).history
    assert_history_close(got, expected)
    # Keras continues from kcc's Adam slots: equal only if each slot went
    # to its own weight.
    more = dict(fit, epochs=1)
    theirs.fit(x, y, **more)
    ours.fit(x, y, **more)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)


def masked_scores():
    """Attention scores masked by a model input: Softmax()(s, mask=keys)
    keeps the keys over 0.5 and hands the mask on to Dropout; Dot drops it."""
    x = keras.Input((5, 4), name="steps")
    keys = keras.Input((1, 5), name="keys")
    q = keras.layers.Dense(6)(x)
    k = keras.layers.Dense(6)(x)
    scores = keras.layers.Dot(axes=2)([q, k])
    w = keras.layers.Dropout(0.0)(keras.layers.Softmax()(scores, mask=keys))
    h = keras.layers.Dot(axes=(2, 1))([w, keras.layers.Dense(6)(x)])
    y = keras.layers.Dense(3, activation="softmax")(
        keras.layers.GlobalAveragePooling1D()(h))
    return keras.Model([x, keys], y)


def test_softmax_mask_argument_matches_keras(rng):
    ours, theirs = twins(masked_scores, lambda: dict(
        optimizer=keras.optimizers.Adam(0.01),
        loss="sparse_categorical_crossentropy"))
    n = 24
    # 0.9 keeps a key, 0.1 masks it; example 2 keeps none.
    lengths = 1 + np.arange(n) % 5
    lengths[2] = 0
    keys = np.where(np.arange(5)[None, None, :] < lengths[:, None, None],
                    0.9, 0.1).astype("float32")
    x = {"steps": rng.normal(size=(n, 5, 4)).astype("float32"), "keys": keys}
    y = rng.integers(0, 3, size=n).astype("int32")
    fit = dict(batch_size=8, epochs=3, shuffle=False, verbose=0)
    expected = theirs.fit(x, y, **fit).history
    got = kcc.fit(ours, x, y, **fit).history
    diff = assert_history_close(got, expected)
    print(f"softmax mask: history max |kcc - keras| = {diff:.2e}")
    np.testing.assert_allclose(ours.predict(x, verbose=0),
                               theirs.predict(x, verbose=0), atol=1e-5, rtol=0)


def stacked_cells():
    """Keras's RNN of a StackedRNNCells over masked ids, its return_state
    beside the sequence, and an RNN of one cell."""
    ids = keras.Input((9,), dtype="int32")
    h = keras.layers.Embedding(12, 4, mask_zero=True)(ids)
    seq, (_, c), g = keras.layers.RNN(
        [keras.layers.LSTMCell(5), keras.layers.GRUCell(3)],
        return_sequences=True, return_state=True, go_backwards=True)(h)
    last = keras.layers.RNN(keras.layers.SimpleRNNCell(4))(seq)
    y = keras.layers.Dense(1, activation="sigmoid")(
        keras.layers.Concatenate()([last, c, g]))
    return keras.Model(ids, y)


def test_rnn_of_stacked_cells_matches_keras(rng):
    # SGD: under Adam(0.01) Keras's own TensorFlow and JAX backends part
    # on this model from the same weights (first epoch 0.6751 against
    # 0.6754; kcc gives JAX's to 1e-7), under SGD they agree to 1e-7.
    ours, theirs = twins(stacked_cells, lambda: dict(
        optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy"))
    n = 24
    x = rng.integers(1, 12, size=(n, 9)).astype("int32")
    x[::3, -3:] = 0   # padding the masks skip
    y = (x[:, :1] > 5).astype("float32")
    fit = dict(batch_size=8, epochs=3, shuffle=False, verbose=0)
    expected = theirs.fit(x, y, **fit).history
    got = kcc.fit(ours, x, y, **fit).history
    diff = assert_history_close(got, expected)
    print(f"stacked cells: history max |kcc - keras| = {diff:.2e}")
    np.testing.assert_allclose(ours.predict(x, verbose=0),
                               theirs.predict(x, verbose=0), atol=1e-5, rtol=0)


def grouped_attention():
    """A Pipeline of Dense layers, then a gated, windowed, causal
    GroupQueryAttention (2 query heads per key/value head)."""
    x = keras.Input((7, 5))
    h = keras.layers.Pipeline([
        keras.layers.Dense(8, activation="tanh"),
        keras.layers.Dense(8),
    ])(x)
    a = keras.layers.GroupQueryAttention(
        head_dim=4, num_query_heads=4, num_key_value_heads=2, use_gate=True,
        sliding_window=3)(h, h, use_causal_mask=True)
    y = keras.layers.Dense(1, activation="sigmoid")(
        keras.layers.GlobalAveragePooling1D()(a))
    return keras.Model(x, y)


def test_grouped_query_attention_in_a_pipeline_model_matches_keras(rng):
    ours, theirs = twins(grouped_attention, lambda: dict(
        optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy"))
    x = rng.normal(size=(24, 7, 5)).astype("float32")
    y = (x[:, :1, 0] > 0).astype("float32")
    fit = dict(batch_size=8, epochs=3, shuffle=False, verbose=0)
    expected = theirs.fit(x, y, **fit).history
    got = kcc.fit(ours, x, y, **fit).history
    diff = assert_history_close(got, expected)
    print(f"grouped attention: history max |kcc - keras| = {diff:.2e}")
    np.testing.assert_allclose(ours.predict(x, verbose=0),
                               theirs.predict(x, verbose=0), atol=1e-5, rtol=0)
