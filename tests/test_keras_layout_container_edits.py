"""Layers put into (or taken out of) an attribute's list or dict after it was set.

Keras 3's tracker copies an attribute's list into a `TrackedList` (a dict into
a `TrackedDict`) whose `append`, `insert`, `extend`, `[key] = ` and `update`
add the layer to the model's `_layers` then, and whose `pop`, `remove`, `del`
and `clear` take it out (`keras/src/utils/tracking.py`). `_layers` orders
`model.layers` and `model.weights`, and names the groups under `layers/` in
a weights file; the attribute walk names the others (`saving_lib._save_state`).
A file crossing between the two libraries loads into the right layers only
if both agree. The expected values are those Keras 3.15.1 gives, written out
by hand; the files are crossed with Keras itself when it is importable, and
a file Keras wrote is committed (`fixtures/keras3/container_edits.weights.h5`).
"""

import functools
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import minikeras as mk
from minikeras.saving import keras_layout

X = np.linspace(-1.0, 1.0, 6, dtype="float32").reshape(2, 3)
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "keras3" / "container_edits.weights.h5"


@functools.cache
def _classes(api):
    """The models, written once for minikeras and once for Keras (same code)."""
    dense = api.layers.Dense
    register = api.saving.register_keras_serializable(package="container_edits")

    class Chain(api.Model):
        def call(self, inputs):
            for layer in self.chain():
                inputs = layer(inputs)
            return inputs

    @register
    class Appended(Chain):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.blocks = [dense(3, name="b0")]
            self.head = dense(3, name="head")
            self.blocks.append(dense(3, name="b1"))
            self.tail = [dense(3, name="t0")]
            self.tail.insert(0, dense(3, name="t1"))  # (Keras: after t0 in `layers`)

        def chain(self):
            return [*self.blocks, self.head, *self.tail]

    @register
    class Extended(Chain):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.blocks = [dense(3, name="b0")]
            self.head = dense(3, name="head")
            self.blocks.extend([dense(3, name="b1")])
            self.blocks += [dense(3, name="b2")]

        def chain(self):
            return [*self.blocks, self.head]

    @register
    class Keyed(Chain):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.parts = {"b": dense(3, name="b"), "a": dense(3, name="a")}
            self.head = dense(3, name="head")
            self.parts["c"] = dense(3, name="c")
            self.parts.update({"d": dense(3, name="d")})

        def chain(self):
            return [*self.parts.values(), self.head]

    @register
    class Removed(Chain):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.blocks = [dense(3, name="b0"), dense(3, name="b1"), dense(3, name="b2")]
            self.head = dense(3, name="head")
            self.parts = {"a": dense(3, name="a"), "b": dense(3, name="b"), "x": dense(3, name="x")}
            self.parts["x"].build((None, 3))
            self.blocks.pop(0)
            del self.blocks[0]
            self.parts.pop("a")
            del self.parts["x"]  # (Keras's TrackedDict has no __delitem__: `x` stays tracked)
            self.blocks.append(dense(3, name="b3"))

        def chain(self):
            return [*self.blocks, self.head, *self.parts.values()]

    @register
    class Replaced(Chain):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.proj = dense(3, name="first_proj")
            self.proj.build((None, 3))  # (built: its weights stay the model's, as in Keras)
            self.head = dense(3, name="head")
            self.proj = dense(3, name="proj")
            self.parts = {"a": dense(3, name="a")}
            self.parts["a"] = dense(3, name="a2")  # (the first `a` stays tracked)

        def chain(self):
            return [self.proj, self.head, self.parts["a"]]

    @register
    class LeftOut(Chain):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.blocks = [dense(3, name="b0"), dense(3, name="b1")]
            self.head = dense(3, name="head")
            self.blocks[0] = dense(3, name="n0")  # (in no `_layers`: not trained in Keras)
            self.parts = {}
            self.parts.setdefault("a", dense(3, name="a"))  # (nor is this one)

        def chain(self):
            return [*self.blocks, self.head, self.parts["a"]]

    @register
    class WithMetrics(Chain):
        # A metric is saveable but writes no group: the layers' names do not shift.
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.blocks = [api.metrics.Mean(), dense(3, name="b0")]
            self.head = dense(3, name="head")
            self.blocks.append([api.metrics.Sum(), dense(3, name="b1")])
            self.parts = {"m": api.metrics.Mean(), "a": dense(3, name="a")}

        def chain(self):
            return [self.blocks[1], self.head, self.blocks[2][1], self.parts["a"]]

    return {
        "appended": Appended, "extended": Extended, "keyed": Keyed, "left_out": LeftOut,
        "removed": Removed, "replaced": Replaced, "with_metrics": WithMetrics,
    }  # fmt: skip


def _model(api, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(api, "TrackingWarning", UserWarning))
        model = _classes(api)[name]()
        model(X)
    return model


# What Keras 3.15.1 gives: `layers` (by name, in order) and the file's groups holding
# weights (the layer there).
EXPECTED = {
    "appended": (
        ["b0", "head", "b1", "t0", "t1"],
        {"blocks/dense": "b0", "blocks/dense_1": "b1", "head": "head",
         "layers/dense_3": "t0", "layers/dense_4": "t1"},
    ),
    "extended": (
        ["b0", "head", "b1", "b2"],
        {"blocks/dense": "b0", "blocks/dense_1": "b1", "blocks/dense_2": "b2", "head": "head"},
    ),
    "keyed": (
        ["b", "a", "head", "c", "d"],
        {"head": "head", "layers/dense": "b", "layers/dense_1": "a", "layers/dense_3": "c",
         "layers/dense_4": "d"},
    ),
    "left_out": (
        ["b0", "b1", "head"],
        {"blocks/dense": "n0", "blocks/dense_1": "b1", "head": "head", "parts/dense": "a"},
    ),
    "removed": (
        ["b2", "head", "b", "x", "b3"],
        {"blocks/dense": "b2", "blocks/dense_1": "b3", "head": "head", "layers/dense_2": "b",
         "layers/dense_3": "x"},
    ),
    "replaced": (
        ["first_proj", "head", "proj", "a", "a2"],
        {"head": "head", "layers/dense": "first_proj", "layers/dense_2": "proj",
         "layers/dense_4": "a2"},
    ),
    "with_metrics": (
        ["b0", "head", "b1", "a"],
        {"blocks/dense": "b0", "blocks/container/dense": "b1", "head": "head",
         "layers/dense_3": "a"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_layers_weights_and_groups_are_in_kerass_order(name):
    model = _model(mk, name)
    layers, groups = EXPECTED[name]
    assert [layer.name for layer in model.layers] == layers
    # `weights`: each layer's in the order of `layers` (a never-built one has none).
    expected = [w for layer in model.layers for w in layer.weights]
    assert [id(w) for w in model.weights] == [id(w) for w in expected]
    placed = {
        path.removesuffix("/vars"): layer.name
        for path, variables, layer in keras_layout.layer_groups(model)
        if variables
    }
    assert placed == groups


def test_a_built_replaced_layers_weights_are_the_models_and_in_the_file():
    model = _model(mk, "replaced")
    first = model.layers[0]
    assert first.built and first.kernel in model.weights and first.kernel in model.trainable_weights
    assert len(model.get_weights()) == 8  # (the first `a`, never built, has none)


@pytest.mark.parametrize("suffix", [".weights.h5", ".keras", ".minikeras"])
def test_a_built_replaced_layers_weights_come_back_from_each_file(suffix, tmp_path):
    model = _model(mk, "replaced")
    model.compile(optimizer="adam", loss="mse")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.TrackingWarning)  # (the replaced layer never moves)
        model.fit(X, X, epochs=1, verbose=0)
    path = tmp_path / f"model{suffix}"
    if suffix == ".weights.h5":
        model.save_weights(path)
        loaded = _model(mk, "replaced")
        loaded.load_weights(path)
    else:
        model.save(path)
        loaded = mk.models.load_model(path)
    assert len(loaded.weights) == len(model.weights) == 8
    for mine, theirs in zip(loaded.weights, model.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_a_layer_put_in_by_item_assignment_is_left_out_as_in_keras_with_a_warning():
    model = mk.Model()
    first, second = mk.layers.Dense(2, name="first"), mk.layers.Dense(2, name="second")
    model.blocks = [first]
    model.blocks[0] = second  # (Keras's TrackedList has no __setitem__)
    with pytest.warns(mk.TrackingWarning, match="'second' is held by"):
        assert model.layers == [first]


def test_the_summary_lists_an_unbuilt_replaced_layer_as_keras_does(capsys):
    model = mk.Model()
    model.proj = mk.layers.Dense(3, name="first_proj")
    model.proj = mk.layers.Dense(4, name="proj")
    model.call = lambda inputs: model.proj(inputs)
    model(X)
    model.summary()
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines() if "(Dense)" in line]
    assert rows == ["first_proj", "proj"]


def test_a_file_keras_wrote_loads_into_the_same_layers():
    """The committed file: Keras's `Appended`, each weight filled with its index in
    Keras's `model.weights` (made by fixtures/keras3/make_container_edits.py)."""
    pytest.importorskip("h5py")
    model = _model(mk, "appended")
    model.load_weights(FIXTURE)
    for index, weight in enumerate(model.weights):
        np.testing.assert_array_equal(weight.numpy(), np.full(weight.shape, index, "float32"))


# --------------------------------------------------------------- against Keras


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _same(ours, theirs, keras):
    assert [layer.name for layer in ours.layers] == [layer.name for layer in theirs.layers]
    assert len(ours.weights) == len(theirs.weights)
    for mine, keras_weight in zip(ours.weights, theirs.weights):
        np.testing.assert_array_equal(mine.numpy(), keras.ops.convert_to_numpy(keras_weight))
    expected = keras.ops.convert_to_numpy(theirs(X))
    np.testing.assert_allclose(ours(X).numpy(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_weights_files_cross_both_ways_with_keras(name, tmp_path):
    keras = _keras()
    theirs, ours = _model(keras, name), _model(mk, name)
    assert [layer.name for layer in theirs.layers] == EXPECTED[name][0]
    rng = np.random.default_rng(3)
    theirs.set_weights([rng.normal(size=w.shape).astype("float32") for w in theirs.weights])
    theirs.save_weights(tmp_path / "keras.weights.h5")
    ours.load_weights(tmp_path / "keras.weights.h5")
    _same(ours, theirs, keras)
    ours.save_weights(tmp_path / "ours.weights.h5")
    fresh = _model(keras, name)
    fresh.load_weights(tmp_path / "ours.weights.h5")
    _same(ours, fresh, keras)
    # get_weights / set_weights cross too: the same order.
    again = _model(mk, name)
    again.set_weights([keras.ops.convert_to_numpy(w) for w in theirs.weights])
    for mine, keras_weight in zip(again.weights, theirs.weights):
        np.testing.assert_array_equal(mine.numpy(), keras.ops.convert_to_numpy(keras_weight))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_keras_files_cross_both_ways_with_the_optimizers_state(name, tmp_path):
    # The optimizer's slots follow `trainable_weights`: crossing needs the same order.
    keras = _keras()
    theirs = _model(keras, name)
    theirs.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    y = np.linspace(0.5, 1.5, 6, dtype="float32").reshape(2, 3)
    theirs.fit(X, y, epochs=1, verbose=0)
    theirs.save(tmp_path / "keras.keras")
    _classes(mk)  # (registers minikeras's twins of the classes the file names)
    ours = mk.models.load_model(tmp_path / "keras.keras")
    _same(ours, theirs, keras)
    ours.save(tmp_path / "ours.keras")
    again = keras.models.load_model(tmp_path / "ours.keras")
    _same(ours, again, keras)
    for model in (theirs, ours, again):
        model.fit(X, y, epochs=1, verbose=0, shuffle=False)
    for mine, one, other in zip(ours.weights, theirs.weights, again.weights):
        expected = keras.ops.convert_to_numpy(one)
        np.testing.assert_allclose(mine.numpy(), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(other), expected, rtol=1e-6)


def test_the_committed_fixture_is_what_keras_writes(tmp_path):
    keras = _keras()
    import h5py

    theirs = _model(keras, "appended")
    for index, weight in enumerate(theirs.weights):
        weight.assign(np.full(weight.shape, index, "float32"))
    theirs.save_weights(tmp_path / "k.weights.h5")

    def datasets(path):
        found = {}
        with h5py.File(path, "r") as file:
            file.visititems(
                lambda key, item: (
                    found.setdefault(key, item[()].tolist())
                    if isinstance(item, h5py.Dataset)
                    else None
                )
            )
        return found

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert datasets(tmp_path / "k.weights.h5") == datasets(FIXTURE)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copys_lists_place_what_goes_into_them_later(how):
    import copy
    import pickle

    model = mk.Model()
    model.blocks = [mk.layers.Dense(2, name="b0")]
    model.head = mk.layers.Dense(2, name="head")
    other = copy.deepcopy(model) if how == "deepcopy" else pickle.loads(pickle.dumps(model))
    other.blocks.insert(0, mk.layers.Dense(2, name="late"))
    assert [layer.name for layer in other.layers] == ["b0", "head", "late"]
    assert [layer.name for layer in model.layers] == ["b0", "head"]


def test_a_layer_put_where_no_record_sees_it_is_named_in_a_warning():
    # Keras appends a plain list as it is and never sees what goes into it later (it
    # leaves `late` out of `layers`): minikeras cannot tell when it went in, and says so.
    model = mk.Model()
    model.blocks = [mk.layers.Dense(2, name="b0")]
    inner = []
    model.blocks.append(inner)
    model.head = mk.layers.Dense(2, name="head")
    inner.append(mk.layers.Dense(2, name="late"))
    with pytest.warns(mk.TrackingWarning, match="'late' is held by .* when it went in is unknown"):
        assert [layer.name for layer in model.layers] == ["b0", "late", "head"]  # (a guess)


def test_a_layer_set_before_super_init_takes_its_place_then():
    class Early(mk.Model):
        def __init__(self):
            self.first = mk.layers.Dense(2, name="first")
            self.blocks = []
            super().__init__()
            self.second = mk.layers.Dense(2, name="second")
            self.blocks.append(mk.layers.Dense(2, name="appended"))

    with warnings.catch_warnings():
        warnings.simplefilter("error", mk.TrackingWarning)
        assert [layer.name for layer in Early().layers] == ["first", "second", "appended"]
