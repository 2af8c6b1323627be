"""Keras's other names: initializer and constraint aliases, `models.save_model`,
`OrthogonalRegularizer`, `SwapEMAWeights` and `ProgbarLogger`; by hand and against Keras 3."""

import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import constraints, initializers, regularizers

ALIASES = {
    initializers: {
        "zeros": "Zeros",
        "ones": "Ones",
        "constant": "Constant",
        "glorot_uniform": "GlorotUniform",
        "glorot_normal": "GlorotNormal",
        "he_uniform": "HeUniform",
        "he_normal": "HeNormal",
        "lecun_uniform": "LecunUniform",
        "lecun_normal": "LecunNormal",
        "random_normal": "RandomNormal",
        "random_uniform": "RandomUniform",
        "truncated_normal": "TruncatedNormal",
        "variance_scaling": "VarianceScaling",
        "orthogonal": "Orthogonal",
        "OrthogonalInitializer": "Orthogonal",
        "identity": "Identity",
        "IdentityInitializer": "Identity",
    },
    constraints: {
        "max_norm": "MaxNorm",
        "min_max_norm": "MinMaxNorm",
        "non_neg": "NonNeg",
        "unit_norm": "UnitNorm",
    },
    regularizers: {"orthogonal_regularizer": "OrthogonalRegularizer"},
}


def test_aliases_are_the_classes_and_their_names_resolve():
    for module, names in ALIASES.items():
        for alias, cls in names.items():
            assert getattr(module, alias) is getattr(module, cls), alias
            # Every name is also a string name (lowercase aliases and Keras's second class
            # names such as "IdentityInitializer", which get did not find).
            assert type(module.get(alias)) is getattr(module, cls), alias
    weights = initializers.glorot_uniform(seed=3)((4, 5))
    np.testing.assert_array_equal(weights, initializers.GlorotUniform(seed=3)((4, 5)))
    layer = mk.layers.Dense(3, kernel_initializer=initializers.orthogonal(seed=1))
    kernel = layer(np.ones((1, 3), "float32")) is not None and layer.kernel.numpy()
    np.testing.assert_allclose(kernel.T @ kernel, np.eye(3), atol=1e-5)


def test_models_save_model_saves_what_load_model_loads(tmp_path):
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    mk.models.save_model(model, tmp_path / "m.keras")
    loaded = mk.models.load_model(tmp_path / "m.keras")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(FileExistsError):
        mk.models.save_model(model, tmp_path / "m.keras", overwrite=False)


def _orthogonal_ref(w, factor, mode):
    vectors = w if mode == "rows" else w.T
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = unit @ unit.T
    n = len(vectors)
    return factor * 0.5 * (np.abs(cosines).sum() - np.trace(np.abs(cosines))) / (n * (n - 1) / 2)


@pytest.mark.parametrize("mode", ["rows", "columns"])
def test_orthogonal_regularizer_by_hand_gradient_and_config(mode):
    from finite_differences import check_gradients

    w = np.random.default_rng(4).standard_normal((5, 3))
    penalty = regularizers.OrthogonalRegularizer(factor=0.2, mode=mode)
    assert float(penalty(w)) == pytest.approx(_orthogonal_ref(w, 0.2, mode), rel=1e-12)
    assert penalty(w.astype(np.float32)).dtype == np.float32
    check_gradients(lambda x: penalty(x), [w])
    again = regularizers.deserialize(regularizers.serialize(penalty))
    assert isinstance(again, regularizers.OrthogonalRegularizer) and again.mode == mode
    assert regularizers.get("orthogonal_regularizer").get_config() == {
        "factor": 0.01,
        "mode": "rows",
    }
    orthogonal = np.linalg.qr(w)[0]  # orthonormal columns: no penalty
    assert float(regularizers.OrthogonalRegularizer(1.0, "columns")(orthogonal)) < 1e-7


def test_orthogonal_regularizer_errors():
    with pytest.raises(ValueError, match="`mode` must be 'rows' or 'columns'"):
        regularizers.OrthogonalRegularizer(mode="diagonal")
    with pytest.raises(ValueError, match="`factor` must be a finite number >= 0"):
        regularizers.OrthogonalRegularizer(factor=-1.0)
    with pytest.raises(ValueError, match=r"expected a 2-D weight, got shape \(2, 2, 2\)"):
        regularizers.OrthogonalRegularizer()(np.ones((2, 2, 2)))


def test_orthogonal_regularizer_in_a_layer_adds_its_penalty_to_the_losses():
    layer = mk.layers.Dense(4, kernel_regularizer="orthogonal_regularizer")
    layer(np.ones((1, 6), "float32"))
    expected = _orthogonal_ref(layer.kernel.numpy().astype(np.float64), 0.01, "rows")
    assert float(sum(layer.losses)) == pytest.approx(expected, rel=1e-5)


def _ema_model():
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(mk.optimizers.SGD(0.1, use_ema=True, ema_momentum=0.5), loss="mse")
    return model


X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0], [-1.0, 1.0]], "float32")
Y = np.array([[1.0], [0.0], [2.0], [-1.0]], "float32")


class _Recorder(mk.callbacks.Callback):
    """Records the kernel when each validation begins and each epoch ends."""

    def __init__(self):
        super().__init__()
        self.at_test, self.at_epoch_end, self.averages = [], [], []

    def on_test_begin(self, logs=None):
        self.at_test.append(self.model.layers[0].kernel.numpy().copy())
        optimizer = self.model.optimizer
        self.averages.append(optimizer._averages[0].numpy().copy())

    def on_epoch_end(self, epoch, logs=None):
        self.at_epoch_end.append(self.model.layers[0].kernel.numpy().copy())


def test_swap_ema_weights_validates_with_the_averages_and_trains_on_the_raw_weights():
    plain, swapped = _ema_model(), _ema_model()
    record_plain, record_swapped = _Recorder(), _Recorder()
    args = {"batch_size": 2, "epochs": 3, "verbose": 0, "validation_data": (X, Y), "shuffle": False}
    plain.fit(X, Y, callbacks=[record_plain], **args)
    swapped.fit(X, Y, callbacks=[mk.callbacks.SwapEMAWeights(), record_swapped], **args)
    # Training is the same; validation saw the averages instead of the raw weights.
    for raw, seen, average in zip(
        record_plain.at_test, record_swapped.at_test, record_plain.averages
    ):
        np.testing.assert_allclose(seen, average, rtol=1e-6)
        assert not np.allclose(seen, raw)
    np.testing.assert_allclose(record_swapped.averages, record_plain.averages, rtol=1e-6)
    np.testing.assert_allclose(
        swapped.layers[0].kernel.numpy(), plain.layers[0].kernel.numpy(), rtol=1e-6
    )


def test_swap_on_epoch_shows_later_callbacks_the_averages_and_ends_on_them():
    plain, swapped = _ema_model(), _ema_model()
    record_plain, record_swapped = _Recorder(), _Recorder()
    plain.fit(X, Y, batch_size=2, epochs=3, verbose=0, shuffle=False, callbacks=[record_plain])
    swap = mk.callbacks.SwapEMAWeights(swap_on_epoch=True)
    swapped.fit(
        X, Y, batch_size=2, epochs=3, verbose=0, shuffle=False, callbacks=[swap, record_swapped]
    )
    optimizer = plain.optimizer
    assert len(record_swapped.at_epoch_end) == 3
    np.testing.assert_allclose(  # the last epoch's averages: fit's final weights
        record_swapped.at_epoch_end[-1], plain.layers[0].kernel.numpy(), rtol=1e-6
    )
    assert not np.allclose(record_plain.at_epoch_end[0], record_swapped.at_epoch_end[0])
    np.testing.assert_allclose(
        swapped.layers[0].kernel.numpy(), plain.layers[0].kernel.numpy(), rtol=1e-6
    )
    np.testing.assert_allclose(
        swapped.optimizer._averages[0].numpy(), optimizer._averages[0].numpy(), rtol=1e-6
    )


def test_swap_ema_weights_needs_use_ema():
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", loss="mse")
    with pytest.raises(ValueError, match="must be made with use_ema=True"):
        model.evaluate(X, Y, verbose=0, callbacks=[mk.callbacks.SwapEMAWeights()])


def test_swap_ema_weights_before_any_training_raises_and_changes_nothing():
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile(mk.optimizers.SGD(0.1, use_ema=True), loss="mse")
    before = model.get_weights()
    for run in (model.evaluate, lambda x, y, **kwargs: model.predict(x, **kwargs)):
        with pytest.raises(ValueError, match="no moving averages yet"):
            run(X, Y, verbose=0, callbacks=[mk.callbacks.SwapEMAWeights()])
        for got, want in zip(model.get_weights(), before):
            np.testing.assert_array_equal(got, want)
    # After a training step the averages exist and stand in.
    model.fit(X, Y, epochs=1, verbose=0)
    model.predict(X, verbose=0, callbacks=[mk.callbacks.SwapEMAWeights()])


def test_swap_ema_weights_raises_where_keras_does():
    # Keras raises a ValueError when its optimizer is not built: in predict before any
    # training. (Its evaluate builds the optimizer first; ours does not and raises too.)
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    for api in (keras, mk):
        model = api.Sequential([api.Input((2,)), api.layers.Dense(1)])
        model.compile(api.optimizers.SGD(0.1, use_ema=True), loss="mse")
        with pytest.raises(ValueError, match="SwapEMAWeights"):
            model.predict(X, verbose=0, callbacks=[api.callbacks.SwapEMAWeights()])


def test_progbar_logger_adds_no_second_display(capsys):
    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(1)])
    model.compile("sgd", loss="mse")
    model.fit(X, Y, epochs=2, verbose=2)
    alone = capsys.readouterr().out
    model.fit(X, Y, epochs=2, verbose=2, callbacks=[mk.callbacks.ProgbarLogger()])
    with_logger = capsys.readouterr().out
    assert alone.count("Epoch") == with_logger.count("Epoch") == 2


def test_names_match_keras():
    keras = pytest.importorskip("keras")
    for module, names in ALIASES.items():
        keras_module = getattr(keras, module.__name__.rpartition(".")[2])
        for alias in names:
            assert getattr(keras_module, alias).__name__ == getattr(module, alias).__name__
    w = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    for mode in ("rows", "columns"):
        ours = regularizers.OrthogonalRegularizer(0.3, mode)(w)
        theirs = keras.regularizers.OrthogonalRegularizer(0.3, mode)(keras.ops.convert_to_tensor(w))
        assert float(ours) == pytest.approx(float(theirs), rel=1e-6)
        config = keras.regularizers.OrthogonalRegularizer(0.3, mode).get_config()
        assert regularizers.OrthogonalRegularizer.from_config(config).get_config() == config
