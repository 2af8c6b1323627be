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
