"""Custom objects that are not registered are saved by name, as Keras 3 saves them.

A file names such a class or function by its `__name__`; loading finds it
again in `custom_objects` (or an open `custom_object_scope`), never by
importing the module it came from, and says which name to pass when it is
missing.
"""

import warnings

import numpy as np
import pytest

import minikeras as mk
from minikeras.saving import LoadError


class HalfOnes(mk.initializers.Initializer):
    def __call__(self, shape, dtype=None):
        return mk.ops.ones(shape, dtype=dtype) * 0.5

    def get_config(self):
        return {}


class SmallL1(mk.regularizers.Regularizer):
    def __call__(self, weights):
        return 0.01 * mk.ops.sum(mk.ops.abs(weights))

    def get_config(self):
        return {}


class ScaledSquares(mk.losses.Loss):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, y_true, y_pred):
        return mk.ops.mean(mk.ops.square(y_true - y_pred), axis=-1) * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class FixedRate(mk.optimizers.schedules.LearningRateSchedule):
    def __init__(self, rate=0.01):
        self.rate = rate

    def __call__(self, step):
        return self.rate

    def get_config(self):
        return {"rate": self.rate}


def absolute_gap(y_true, y_pred):
    return mk.ops.mean(mk.ops.abs(y_true - y_pred), axis=-1)


CUSTOM = {
    "HalfOnes": HalfOnes,
    "SmallL1": SmallL1,
    "ScaledSquares": ScaledSquares,
    "FixedRate": FixedRate,
    "absolute_gap": absolute_gap,
}


def _trained_model():
    model = mk.Sequential([
        mk.Input((3,)),
        mk.layers.Dense(2, kernel_initializer=HalfOnes(), kernel_regularizer=SmallL1()),
    ])  # fmt: skip
    model.compile(mk.optimizers.Adam(FixedRate(0.05)), ScaledSquares(3.0), metrics=[absolute_gap])
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    model.fit(x, np.ones((4, 2), "float32"), epochs=2, verbose=0)
    return model, x


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_every_kind_of_unregistered_object_comes_back_with_custom_objects(tmp_path, suffix):
    model, x = _trained_model()
    path = tmp_path / f"model.{suffix}"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (not "saved without its training state")
        model.save(path)
    loaded = mk.models.load_model(path, custom_objects=CUSTOM)
    dense = loaded.layers[0]
    assert type(dense.kernel_initializer) is HalfOnes and type(dense.kernel_regularizer) is SmallL1
    assert type(loaded.loss) is ScaledSquares and loaded.loss.factor == 3.0
    assert type(loaded.optimizer._learning_rate) is FixedRate
    assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy()) == 2
    y = np.ones((4, 2), "float32")
    assert loaded.evaluate(x, y, verbose=0, return_dict=True) == model.evaluate(
        x, y, verbose=0, return_dict=True
    )


@pytest.mark.parametrize("missing", sorted(CUSTOM))
def test_the_load_error_names_the_missing_object_and_the_custom_objects_to_pass(tmp_path, missing):
    model, _ = _trained_model()
    model.save(tmp_path / "model.minikeras")
    given = {name: obj for name, obj in CUSTOM.items() if name != missing}
    with pytest.raises(LoadError, match=rf"{missing}.*custom_objects=\{{'{missing}'"):
        mk.models.load_model(tmp_path / "model.minikeras", custom_objects=given)
    # Without the training state, only what the architecture names is needed.
    if missing in ("ScaledSquares", "FixedRate", "absolute_gap"):
        loaded = mk.models.load_model(
            tmp_path / "model.minikeras", custom_objects=given, compile=False
        )
        assert not loaded.compiled


def test_a_nested_unregistered_layer_and_a_subclassed_model_round_trip(tmp_path):
    class Inner(mk.layers.Layer):
        def __init__(self, units=2, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")

        def call(self, inputs):
            return mk.ops.matmul(inputs, self.kernel)

    class Outer(mk.Model):
        def __init__(self, units=2, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.inner = Inner(units)
            self.head = mk.layers.Dense(1)

        def call(self, inputs):
            return self.head(self.inner(inputs))

    model = Outer(units=4)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype("float32")
    expected = model.predict(x, verbose=0)
    model.save(tmp_path / "outer.keras")
    with pytest.raises(LoadError, match="unknown layer class 'Outer'"):
        mk.models.load_model(tmp_path / "outer.keras", custom_objects={"Inner": Inner})
    loaded = mk.models.load_model(
        tmp_path / "outer.keras", custom_objects={"Outer": Outer, "Inner": Inner}
    )
    assert type(loaded) is Outer and type(loaded.inner) is Inner and loaded.units == 4
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), expected)


def test_a_registration_under_another_name_does_not_stand_in_for_the_saved_one(tmp_path):
    class Late(mk.layers.Layer):
        def call(self, inputs):
            return inputs + 1.0

    mk.Sequential([mk.Input((2,)), Late(name="late")]).save(tmp_path / "late.minikeras")
    registered = mk.saving.register_keras_serializable(package="Tests", name="Late")(Late)
    try:
        # The file names it "Late"; Keras looks registered names up by the file's name only,
        # and so does minikeras: the registration under "Tests>Late" is not that name.
        with pytest.raises(LoadError, match="unknown layer class 'Late'"):
            mk.models.load_model(tmp_path / "late.minikeras")
    finally:
        del mk.saving.get_custom_objects()["Tests>Late"]
    assert registered is Late


def test_the_hint_names_both_fixes():
    hint = mk.object_registry.unknown_custom_hint("pkg>Thing")
    assert "custom_objects={'pkg>Thing': Thing}" in hint
    assert "@minikeras.saving.register_keras_serializable()" in hint


def _named_like_built_ins():
    """Classes of the user's that carry built-in names, each doing something else."""

    class Dense(mk.layers.Layer):  # (no weights: adds 100)
        def call(self, inputs):
            return inputs + 100.0

    class MeanSquaredError(mk.losses.Loss):
        def call(self, y_true, y_pred):
            return mk.ops.mean(mk.ops.abs(y_true - y_pred), axis=-1) * 1000.0

    class ExponentialDecay(mk.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return 0.125

        def get_config(self):
            return {}

    class L2(mk.regularizers.Regularizer):
        def __call__(self, weights):
            return 1000.0 * mk.ops.sum(mk.ops.abs(weights))

        def get_config(self):
            return {}

    return {"Dense": Dense, "MeanSquaredError": MeanSquaredError,
            "ExponentialDecay": ExponentialDecay, "L2": L2}  # fmt: skip


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_a_class_of_the_users_named_like_a_built_in_never_loads_as_the_built_in(tmp_path, suffix):
    classes = _named_like_built_ins()
    model = mk.Sequential([
        mk.Input((3,)),
        mk.layers.Dense(2, kernel_regularizer=classes["L2"](), name="real"),
        classes["Dense"](name="fake"),
    ])  # fmt: skip
    model.compile(mk.optimizers.SGD(classes["ExponentialDecay"]()), classes["MeanSquaredError"]())
    x, y = np.ones((4, 3), "float32"), np.zeros((4, 2), "float32")
    model.fit(x, y, verbose=0)
    path = tmp_path / f"model.{suffix}"
    model.save(path)
    for name in classes:
        given = {key: value for key, value in classes.items() if key != name}
        with pytest.raises(LoadError, match=rf"'{name}'.*custom_objects=\{{'{name}'"):
            mk.models.load_model(path, custom_objects=given)
    loaded = mk.models.load_model(path, custom_objects=classes)
    assert type(loaded.get_layer("fake")) is classes["Dense"]
    assert type(loaded.get_layer("real").kernel_regularizer) is classes["L2"]
    assert type(loaded.loss) is classes["MeanSquaredError"]
    assert type(loaded.optimizer._learning_rate) is classes["ExponentialDecay"]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_a_registered_class_does_not_stand_in_for_an_unregistered_one_of_its_name(tmp_path):
    @mk.saving.register_keras_serializable(package="Tests")
    class Gap(mk.losses.Loss):
        def call(self, y_true, y_pred):
            return mk.ops.mean(mk.ops.square(y_true - y_pred), axis=-1)

    registered = Gap

    class Gap(mk.losses.Loss):  # noqa: F811 (the point: another class of that name)
        def call(self, y_true, y_pred):
            return mk.ops.mean(mk.ops.abs(y_true - y_pred), axis=-1)

    try:
        model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        model.compile("sgd", Gap())
        model.save(tmp_path / "gap.minikeras")
        with pytest.raises(LoadError, match="Unknown loss class 'Gap'"):
            mk.models.load_model(tmp_path / "gap.minikeras")
        loaded = mk.models.load_model(tmp_path / "gap.minikeras", custom_objects={"Gap": Gap})
        assert type(loaded.loss) is Gap and Gap is not registered
    finally:
        del mk.saving.get_custom_objects()["Tests>Gap"]


def bias(y_true, y_pred):
    return mk.ops.mean(y_pred - y_true, axis=-1)


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_functions_inside_wrappers_and_a_subclassed_optimizer_keep_the_training_state(
    tmp_path, suffix
):
    class Tuned(mk.optimizers.Adam):  # (the same slots as Adam: Keras's Adam layout)
        pass

    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    model.compile(
        Tuned(0.01),
        mk.losses.LossFunctionWrapper(absolute_gap),
        metrics=[mk.metrics.MeanMetricWrapper(bias, name="bias")],
    )
    x, y = np.ones((4, 3), "float32"), np.zeros((4, 2), "float32")
    model.fit(x, y, epochs=2, verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (not "saved without its training state")
        model.save(tmp_path / f"model.{suffix}")
    loaded = mk.models.load_model(
        tmp_path / f"model.{suffix}",
        custom_objects={"Tuned": Tuned, "absolute_gap": absolute_gap, "bias": bias},
    )
    assert type(loaded.optimizer) is Tuned and int(loaded.optimizer.iterations.numpy()) == 2
    assert loaded.evaluate(x, y, verbose=0, return_dict=True) == model.evaluate(
        x, y, verbose=0, return_dict=True
    )


def quarter(x):
    return x * 0.25


def test_a_built_in_activations_name_is_the_built_in_whatever_custom_objects_hold(tmp_path):
    def relu(x):  # (a user's function of that name: it must not replace the built-in)
        return x * 10.0

    model = mk.Sequential([mk.Input((2,)), mk.layers.Dense(2, activation="relu", name="d")])
    model.save(tmp_path / "m.keras")
    for loaded in (
        mk.models.load_model(tmp_path / "m.keras", custom_objects={"relu": relu}),
        mk.models.model_from_json(model.to_json(), custom_objects={"relu": relu}),
    ):
        assert loaded.get_layer("d").activation is mk.activations.relu
    assert mk.activations.deserialize("relu", custom_objects={"relu": relu}) is mk.activations.relu


def test_a_function_entry_finds_its_custom_object_first_as_keras_does():
    def gelu(x):
        return x

    entry = {"module": "keras.activations", "class_name": "function", "config": "gelu",
             "registered_name": None}  # fmt: skip
    found = mk.saving.deserialize_keras_object(entry, custom_objects={"gelu": gelu})
    assert found is gelu  # (Keras looks a function up by its name, custom objects first)
    assert mk.saving.deserialize_keras_object(entry) is mk.activations.gelu


@pytest.mark.parametrize("suffix", ["minikeras", "keras"])
def test_a_registered_function_of_another_module_does_not_stand_in_for_one_of_its_name(
    tmp_path, suffix
):
    def other(x):
        return x * 100.0

    other.__module__ = "elsewhere"
    mk.saving.register_keras_serializable(package="Tests", name="quarter")(other)
    try:
        inputs = mk.Input((2,))
        model = mk.Model(inputs, mk.layers.Lambda(quarter, name="q")(inputs))
        model.save(tmp_path / f"m.{suffix}")
        with pytest.raises(LoadError, match="quarter.*custom_objects"):
            mk.models.load_model(tmp_path / f"m.{suffix}")
        loaded = mk.models.load_model(tmp_path / f"m.{suffix}", custom_objects={"quarter": quarter})
        assert loaded.get_layer("q").function is quarter
    finally:
        del mk.saving.get_custom_objects()["Tests>quarter"]


class HoldsASequential(mk.Model):
    """A subclassed model whose Sequential's layers are named anew at each construction."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seq = mk.Sequential([mk.layers.Dense(3, activation="relu")])
        self.head = mk.layers.Dense(2)

    def call(self, inputs):
        return self.head(self.seq(inputs))


@pytest.mark.parametrize("suffix", [".minikeras", ".keras"])
def test_a_subclassed_model_whose_inner_layers_are_named_anew_resumes_training(tmp_path, suffix):
    # Rebuilt, its Sequential's Dense is dense_2 where the file says dense: the weights
    # matched by position, the optimizer's state named the file's paths ("the optimizer
    # updates unknown weights ['seq/dense/kernel', ...]").
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 4)).astype("float32"), rng.normal(size=(16, 2)).astype("float32")
    model = HoldsASequential()
    model.compile("adam", "mse")
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    model.save(tmp_path / f"m{suffix}")
    loaded = mk.models.load_model(
        tmp_path / f"m{suffix}", custom_objects={"HoldsASequential": HoldsASequential}
    )
    assert [w.path for w in loaded.weights] != [w.path for w in model.weights]  # (named anew)
    for each in (model, loaded):
        each.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    for mine, theirs in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
