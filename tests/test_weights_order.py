"""Weights come in Keras 3's order, so `get_weights` / `set_weights` cross between the two.

The rule (Keras's `Layer.weights`): a layer's own weights (those made
trainable first, then those made non-trainable, each in creation order), then
each sub-layer's weights, recursively, sub-layers in the order their
attributes were set; a Sequential's in its order, a functional model's in
Keras's `layers` order. The hand-built cases below check the rule without
Keras; the architectures of `weight_order_models.py` are checked against
Keras itself when it is importable. Files and backups written while minikeras
listed weights by creation (tests/fixtures/minikeras_creation_order) still load.
"""

import contextlib
import importlib.util
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from weight_order_models import ARCHITECTURES, sample_inputs

import minikeras as mk
from minikeras import Layer, Variable
from minikeras.layers import BatchNormalization, Dense
from minikeras.saving import keras_layout

LEGACY = Path(__file__).resolve().parent / "fixtures" / "minikeras_creation_order"


def ids(weights):
    return [id(w) for w in weights]


def built_dense(units=2, inputs=3, name=None):
    layer = Dense(units, name=name)
    layer.build((None, inputs))
    return layer


# ------------------------------------------------------------- the rule, by hand


def test_own_weights_come_before_sub_layers_even_when_made_after_them():
    class Block(Layer):
        def __init__(self):
            super().__init__()
            self.inner = Dense(2)

        def build(self, input_shape):
            self.inner.build(input_shape)  # the sub-layer's weights are made first
            self.scale = self.add_weight(shape=(2,), initializer="ones", name="scale")

        def call(self, inputs):
            return self.inner(inputs) * self.scale

    block = Block()
    block(np.ones((1, 3), "float32"))
    assert ids(block.weights) == ids([block.scale, block.inner.kernel, block.inner.bias])


def test_sub_layers_come_in_attribute_order_not_creation_or_call_order():
    class Block(Layer):
        def __init__(self):
            super().__init__()
            made_first = Dense(2, name="made_first")
            self.set_first = Dense(2, name="set_first")
            self.set_second = made_first

        def call(self, inputs):
            return self.set_first(self.set_second(inputs))

    block = Block()
    block(np.ones((1, 2), "float32"))
    assert [w.path for w in block.weights] == [
        "set_first/kernel",
        "set_first/bias",
        "made_first/kernel",
        "made_first/bias",
    ]


def test_own_weights_made_trainable_come_first_and_a_flag_changed_later_moves_nothing():
    layer = Layer()
    count = layer.add_weight(shape=(), initializer="zeros", trainable=False, name="count")
    kernel = layer.add_weight(shape=(2,), name="kernel")
    bias = layer.add_weight(shape=(2,), initializer="zeros", name="bias")
    assert ids(layer.weights) == ids([kernel, bias, count])
    kernel.trainable = False
    assert ids(layer.weights) == ids([kernel, bias, count])
    assert ids(layer.trainable_weights) == ids([bias])
    assert ids(layer.non_trainable_weights) == ids([kernel, count])


def test_freezing_a_nested_layer_keeps_the_order_and_filters_the_lists():
    class Block(Layer):
        def __init__(self):
            super().__init__()
            self.dense = Dense(3)
            self.norm = BatchNormalization()

        def call(self, inputs, training=None):
            return self.norm(self.dense(inputs), training=training)

    outer = mk.Sequential([mk.Input((2,)), Block(), Dense(1)])
    block, head = outer.layers
    before = ids(outer.weights)
    block.dense.trainable = False
    assert ids(outer.weights) == before
    expected_trainable = [block.norm.gamma, block.norm.beta, head.kernel, head.bias]
    assert ids(outer.trainable_weights) == ids(expected_trainable)
    assert ids(outer.non_trainable_weights) == ids(
        [block.dense.kernel, block.dense.bias, block.norm.moving_mean, block.norm.moving_variance]
    )


def test_lists_and_dicts_of_layers_come_in_their_order_within_the_attribute_order():
    class Holder(Layer):
        def __init__(self):
            super().__init__()
            self.blocks = [built_dense(name="b1"), built_dense(name="b0")]
            self.table = {"z": built_dense(name="z"), "a": built_dense(name="a")}
            self.offset = Variable(np.zeros(2, "float32"), name="offset")

    holder = Holder()
    assert [w.path for w in holder.weights][0] == holder.offset.path
    assert [w.path.split("/")[0] for w in holder.weights[1::2]] == ["b1", "b0", "z", "a"]


def test_a_shared_sub_layer_and_a_weight_held_twice_count_where_first_met():
    shared = built_dense(name="shared")

    class Inner(Layer):
        def __init__(self):
            super().__init__()
            self.shared = shared

    class Outer(Layer):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.own = built_dense(name="own")
            self.shared = shared  # met again: already counted inside `inner`
            self.tied = self.own.kernel  # the layer's own too: it comes first

    outer = Outer()
    assert ids(outer.weights) == ids([outer.own.kernel, shared.kernel, shared.bias, outer.own.bias])


def test_a_functional_model_lists_its_layers_weights_in_keras_layers_order():
    a, b = mk.Input((2,)), mk.Input((3,))
    short = Dense(4, name="short")(a)  # built first, but nearer the output
    deep = Dense(4, name="deep_2")(Dense(5, name="deep_1")(b))
    model = mk.Model([a, b], Dense(1, name="head")(mk.layers.Add()([short, deep])))
    names = [layer.name for layer in model.layers if layer.weights]
    assert names == ["deep_1", "short", "deep_2", "head"]
    assert ids(model.weights) == ids([w for layer in model.layers for w in layer.weights])


def test_get_set_weights_and_optimizer_slots_follow_the_order():
    class Net(mk.Model):
        def __init__(self):
            super().__init__()
            self.out = Dense(1)
            self.hidden = Dense(3)

        def call(self, inputs):
            return self.out(self.hidden(inputs))

    net = Net()
    net(np.ones((1, 2), "float32"))
    assert [w.shape for w in net.get_weights()] == [(3, 1), (1,), (2, 3), (3,)]
    arrays = [np.full(w.shape, i, "float32") for i, w in enumerate(net.weights)]
    net.set_weights(arrays)
    assert float(net.out.bias.numpy()[0]) == 1.0 and float(net.hidden.bias.numpy()[0]) == 3.0
    optimizer = mk.optimizers.Adam()
    optimizer.build(net.trainable_weights)
    slots = [v.shape for v in optimizer.variables[2:]]
    assert slots == [(3, 1), (1,), (2, 3), (3,)] * 2  # momentums, then velocities


# --------------------------------------------------------------- against Keras


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _described(weights):
    # Keras names MultiHeadAttention's weights `kernel` inside its query sub-layer;
    # minikeras, which keeps them flat, `query/kernel`: the last part is compared.
    return [(w.name.split("/")[-1], tuple(w.shape)) for w in weights]


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_the_order_is_keras_order(name):
    keras = _keras()
    ours, theirs = ARCHITECTURES[name](mk), ARCHITECTURES[name](keras)
    for kind in ("weights", "trainable_weights", "non_trainable_weights"):
        assert _described(getattr(ours, kind)) == _described(getattr(theirs, kind)), kind


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_set_weights_from_keras_get_weights_predicts_as_keras(name):
    keras = _keras()
    ours, theirs = ARCHITECTURES[name](mk), ARCHITECTURES[name](keras)
    rng = np.random.default_rng(1)
    # Non-default values everywhere (BatchNormalization's statistics too) so a swap shows.
    arrays = [rng.uniform(0.5, 1.5, w.shape).astype(w.dtype) for w in theirs.weights]
    theirs.set_weights(arrays)
    ours.set_weights(theirs.get_weights())
    inputs = sample_inputs(ours)
    expected = keras.ops.convert_to_numpy(theirs(inputs, training=False))
    np.testing.assert_allclose(ours(inputs, training=False).numpy(), expected, rtol=2e-4, atol=2e-5)
    for mine, keras_array in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_array_equal(mine, keras.ops.convert_to_numpy(keras_array))


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_weights_files_cross_both_ways(name, tmp_path):
    keras = _keras()
    ours, theirs = ARCHITECTURES[name](mk), ARCHITECTURES[name](keras)
    rng = np.random.default_rng(2)
    theirs.set_weights([rng.uniform(0.5, 1.5, w.shape).astype(w.dtype) for w in theirs.weights])
    theirs.save_weights(tmp_path / "keras.weights.h5")
    ours.load_weights(tmp_path / "keras.weights.h5")
    for mine, keras_weight in zip(ours.weights, theirs.weights):
        np.testing.assert_array_equal(mine.numpy(), keras.ops.convert_to_numpy(keras_weight))
    ours.save_weights(tmp_path / "ours.weights.h5")
    fresh = ARCHITECTURES[name](keras)
    fresh.load_weights(tmp_path / "ours.weights.h5")
    for mine, keras_weight in zip(ours.weights, fresh.weights):
        np.testing.assert_array_equal(mine.numpy(), keras.ops.convert_to_numpy(keras_weight))


# ------------------------------------------------- files written by creation order


def _fixture_module(name, folder):
    """A fixture folder's `make_fixtures.py`, imported (its classes, its `build`)."""
    spec = importlib.util.spec_from_file_location(name, folder / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _legacy_module():
    return _fixture_module("creation_order_fixtures", LEGACY)


LEGACY_MODULE = _legacy_module()


# The Dense biases in front of the Block's BatchNormalization: the normalization takes
# out any shift, so their gradient is zero up to rounding, which Adam scales to steps of
# up to the learning rate. After training their values depend on the CPU's rounding
# (its BLAS's order of sums), not on where the optimizer's slots went.
ROUNDING_ONLY = ("block/first/bias", "block/second/bias")
# The normalization's moving mean averages the activations those biases shift (by 1% a
# step): it moves with them, by ~1e-6 of its ~5e-3; a wrong restore would move it by more.
FOLLOWS_ROUNDING = {"block/norm/moving_mean": 1e-5}


def _assert_weights(model, data, prefix):
    found = LEGACY_MODULE.by_path(model)
    assert sorted(found) == sorted(k[len(prefix) :] for k in data.files if k.startswith(prefix))
    for path, value in found.items():
        if path not in ROUNDING_ONLY:
            atol = FOLLOWS_ROUNDING.get(path, 1e-7)
            np.testing.assert_allclose(value, data[prefix + path], rtol=1e-5, atol=atol)


def test_the_fixture_model_lists_its_weights_in_another_order_than_by_creation():
    model = LEGACY_MODULE.build_model()
    assert [w._index for w in model.weights] != sorted(w._index for w in model.weights)


@pytest.mark.parametrize("name", ["nested.minikeras", "nested.keras"])
def test_a_model_file_written_by_creation_order_resumes_training(name):
    data = np.load(LEGACY / "nested.npz")
    model = mk.saving.load_model(LEGACY / name)
    model.fit(data["x"], data["y"], batch_size=8, epochs=1, shuffle=False, verbose=0)
    _assert_weights(model, data, "after_step/")  # the optimizer's slots came back in place


@pytest.mark.parametrize("name", ["nested.weights.minikeras", "nested.weights.h5", "nested.keras"])
def test_weights_files_written_by_creation_order_load(name):
    data = np.load(LEGACY / "nested.npz")
    saved = mk.saving.load_model(LEGACY / "nested.minikeras")
    model = LEGACY_MODULE.build_model()
    model.load_weights(LEGACY / name)
    for mine, theirs in zip(model.weights, saved.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    np.testing.assert_allclose(
        model.predict(data["x"], verbose=0), saved.predict(data["x"], verbose=0), rtol=1e-6
    )


def test_a_backup_written_by_creation_order_resumes_as_it_did(tmp_path):
    shutil.copytree(LEGACY / "backup", tmp_path / "backup")
    data = np.load(LEGACY / "backup_weights.npz")
    x, y = LEGACY_MODULE.data()
    mk.utils.set_random_seed(1)  # (other initial weights: the backup must replace them)
    model = LEGACY_MODULE.build_model()
    backup = mk.callbacks.BackupAndRestore(str(tmp_path / "backup"))
    model.fit(x, y, batch_size=4, epochs=2, shuffle=False, callbacks=[backup], verbose=0)
    _assert_weights(model, data, "resumed/")


def test_a_new_backup_records_its_order_and_resumes(tmp_path):
    x, y = LEGACY_MODULE.data()

    class Interrupt(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            raise RuntimeError("interrupted")

    def fit(callbacks, seed):
        mk.utils.set_random_seed(seed)
        model = LEGACY_MODULE.build_model()
        with contextlib.suppress(RuntimeError):
            model.fit(x, y, batch_size=4, epochs=2, shuffle=False, callbacks=callbacks, verbose=0)
        return model

    straight = fit([], 0)
    backup = str(tmp_path / "backup")
    fit([mk.callbacks.BackupAndRestore(backup, delete_checkpoint=False), Interrupt()], 0)
    assert (
        '"weights_order": "keras"' in (tmp_path / "backup" / "training_metadata.json").read_text()
    )
    resumed = fit([mk.callbacks.BackupAndRestore(backup)], 1)
    for mine, expected in zip(resumed.weights, straight.weights):
        np.testing.assert_allclose(mine.numpy(), expected.numpy(), rtol=1e-5, atol=1e-7)


def test_an_older_backup_needs_an_optimizer_built_in_its_order(tmp_path):
    shutil.copytree(LEGACY / "backup", tmp_path / "backup")
    x, y = LEGACY_MODULE.data()
    model = LEGACY_MODULE.build_model()
    model.optimizer.build(model.trainable_weights)  # (Keras's order, not the backup's)
    backup = mk.callbacks.BackupAndRestore(str(tmp_path / "backup"))
    with pytest.raises(ValueError, match="listed weights by creation"):
        model.fit(x, y, batch_size=4, epochs=2, shuffle=False, callbacks=[backup], verbose=0)


# ------------------------------------ a subclassed model's later attributes (Keras's layout)

ATTRIBUTE_LAYOUT = Path(__file__).resolve().parent / "fixtures" / "minikeras_attribute_layout"


def _late_model_module():
    return _fixture_module("attribute_layout_fixtures", ATTRIBUTE_LAYOUT)


def test_later_attributes_of_a_subclassed_model_sit_in_kerass_layers_container():
    model = _late_model_module().build()
    paths = [path for path, variables, _ in keras_layout.layer_groups(model) if variables]
    # head < layers: its own path; the rest by class in model.layers' order (zeta, head,
    # norm, gate, s0, s1, spectral), head counted though placed: dense, (dense_1), ...
    assert paths == [
        "head/vars", "layers/dense/vars", "layers/batch_normalization/vars",
        "layers/dense_2/vars", "layers/dense_3/vars", "layers/dense_4/vars",
        "layers/spectral_normalization/vars", "layers/spectral_normalization/layer/vars",
    ]  # fmt: skip


@pytest.mark.parametrize("file", ["late.weights.h5", "late.keras"])
def test_a_subclassed_models_file_written_before_still_loads(file):
    fixtures = _late_model_module()  # (it registers the class the .keras file names)
    model = fixtures.build()
    if file.endswith(".keras"):
        model = mk.models.load_model(ATTRIBUTE_LAYOUT / file)
    else:
        model.load_weights(ATTRIBUTE_LAYOUT / file)  # (by attribute: zeta/vars, ...)
    expected = np.load(ATTRIBUTE_LAYOUT / "late.npz")
    assert sorted(expected.files) == sorted(w.path for w in model.weights)
    for weight in model.weights:  # (SpectralNormalization's through its own hooks too)
        np.testing.assert_array_equal(weight.numpy(), expected[weight.path])


class Tower(mk.layers.Layer):
    """Eleven blocks in a list and two heads in a dict inserted out of sorted order."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.blocks = [Dense(2, name=f"block{i}") for i in range(11)]
        self.heads = {"topic": Dense(2, name="topic"), "sentiment": Dense(2, name="sentiment")}

    def call(self, inputs):
        for block in self.blocks:
            inputs = block(inputs)
        return self.heads["topic"](inputs) + self.heads["sentiment"](inputs)


def test_a_lists_and_a_dicts_layers_are_named_in_their_own_order_as_keras_names_them():
    inputs = mk.Input((2,))
    model = mk.Model(inputs, Tower(name="tower")(inputs))
    placed = {
        layer.name: path for path, _, layer in keras_layout.layer_groups(model) if layer is not None
    }
    # Keras numbers a container's items in order: block10 is dense_10, not dense_2 (the
    # order of the sorted strings "blocks[10]" < "blocks[2]"), topic before sentiment.
    assert placed["block2"] == "layers/tower/blocks/dense_2/vars"
    assert placed["block10"] == "layers/tower/blocks/dense_10/vars"
    assert placed["topic"] == "layers/tower/heads/dense/vars"
    assert placed["sentiment"] == "layers/tower/heads/dense_1/vars"


def _aliased(api):
    class Aliased(api.Model):
        """`zz` also held as `backbone`, `yy` also as `alias_y`: Keras's sorted walk meets
        each at the attribute that sorts first."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.zz = api.layers.Dense(3, name="zz")
            self.backbone = self.zz
            self.head = api.layers.Dense(2, name="head")
            self.yy = api.layers.Dense(2, name="yy")
            self.alias_y = self.yy

        def call(self, inputs):
            return self.head(self.backbone(inputs)) + self.alias_y(self.zz(inputs))

    model = Aliased()
    model(np.ones((1, 4), "float32"))
    return model


def test_a_layer_held_by_two_attributes_sits_at_the_one_that_sorts_first():
    paths = [p for p, variables, _ in keras_layout.layer_groups(_aliased(mk)) if variables]
    assert paths == ["alias_y/vars", "backbone/vars", "head/vars"]


def test_a_layer_held_by_two_attributes_crosses_with_keras(tmp_path):
    keras = _keras()
    theirs, ours = _aliased(keras), _aliased(mk)
    rng = np.random.default_rng(3)
    theirs.set_weights([rng.normal(size=w.shape).astype("float32") for w in theirs.weights])
    theirs.save_weights(tmp_path / "keras.weights.h5")
    ours.load_weights(tmp_path / "keras.weights.h5")
    x = np.ones((2, 4), "float32")
    np.testing.assert_allclose(ours(x).numpy(), keras.ops.convert_to_numpy(theirs(x)), rtol=1e-6)
