"""The layers a compiled training step admits beyond dense and convolutional ones.

For each layer of `REPLAYABLE_LAYERS`, a small model trains in `fit` with
the compiled step exactly (bit for bit: weights, optimizer slots, history)
as with `jit_compile=False`, and its later batches really are replayed
(every kind of batch keeps a `Program`, not a refusal). A call that computes
an array outside the recorded ops is refused and trains eagerly; a value
check (an Embedding's ids) runs at every replay.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.engine.replay import Program
from minikeras.layers import Conv1D, Conv2D, Dense, Flatten, Input
from minikeras.models.replayability import REPLAYABLE_LAYERS

L = mk.layers
RNG = np.random.default_rng(1)
VECTORS = RNG.normal(size=(40, 6)).astype(np.float32)
SEQUENCES = RNG.normal(size=(40, 5, 4)).astype(np.float32)
IMAGES = RNG.normal(size=(40, 6, 6, 2)).astype(np.float32)
VOLUMES = RNG.normal(size=(40, 4, 4, 4, 2)).astype(np.float32)
IDS = RNG.integers(0, 10, size=(40, 5))
TARGETS = RNG.normal(size=(40, 2)).astype(np.float32)


def after_dense(layer):
    return lambda: mk.Sequential([Input((6,)), Dense(5), layer(), Dense(2)])


def after_conv1d(layer, flatten=True):
    head = [Flatten()] if flatten else []
    return lambda: mk.Sequential([Input((5, 4)), Conv1D(3, 2), layer(), *head, Dense(2)])


def after_conv2d(layer, flatten=True):
    head = [Flatten()] if flatten else []
    return lambda: mk.Sequential([Input((6, 6, 2)), Conv2D(3, 1), layer(), *head, Dense(2)])


def on_images(layer):
    return lambda: mk.Sequential([Input((6, 6, 2)), layer(), Flatten(), Dense(2)])


def on_volumes(layer):
    return lambda: mk.Sequential([Input((4, 4, 4, 2)), layer(), Flatten(), Dense(2)])


def merged(merge):
    def make():
        inputs = Input((6,))
        first, second = Dense(4)(inputs), Dense(4, activation="relu")(inputs)
        return mk.Model(inputs, Dense(2)(merge()([first, second])))

    return make


CASES = {
    "LayerNormalization": (after_dense(L.LayerNormalization), VECTORS),
    "LayerNormalization-rms": (
        after_dense(lambda: L.LayerNormalization(rms_scaling=True, center=False)),
        VECTORS,
    ),
    "LayerNormalization-two-axes": (
        after_conv1d(lambda: L.LayerNormalization(axis=[1, 2])),
        SEQUENCES,
    ),
    "PReLU": (after_dense(L.PReLU), VECTORS),
    "RepeatVector": (
        lambda: mk.Sequential([Input((6,)), Dense(3), L.RepeatVector(3), Flatten(), Dense(2)]),
        VECTORS,
    ),
    "Permute": (
        lambda: mk.Sequential([Input((5, 4)), L.Permute((2, 1)), Dense(3), Flatten(), Dense(2)]),
        SEQUENCES,
    ),
    "GlobalAveragePooling1D": (after_conv1d(L.GlobalAveragePooling1D, False), SEQUENCES),
    "GlobalMaxPooling1D": (after_conv1d(L.GlobalMaxPooling1D, False), SEQUENCES),
    "GlobalMaxPooling2D": (after_conv2d(L.GlobalMaxPooling2D, False), IMAGES),
    "MaxPooling1D": (after_conv1d(lambda: L.MaxPooling1D(2)), SEQUENCES),
    "AveragePooling1D": (after_conv1d(lambda: L.AveragePooling1D(2, padding="same")), SEQUENCES),
    "Conv1DTranspose": (after_conv1d(lambda: L.Conv1DTranspose(2, 3, strides=2)), SEQUENCES),
    "Conv2DTranspose": (on_images(lambda: L.Conv2DTranspose(3, 3, strides=2)), IMAGES),
    "DepthwiseConv1D": (after_conv1d(lambda: L.DepthwiseConv1D(2, depth_multiplier=2)), SEQUENCES),
    "DepthwiseConv2D": (on_images(lambda: L.DepthwiseConv2D(3, depth_multiplier=2)), IMAGES),
    "SeparableConv1D": (after_conv1d(lambda: L.SeparableConv1D(3, 2)), SEQUENCES),
    "SeparableConv2D": (on_images(lambda: L.SeparableConv2D(3, 3, activation="relu")), IMAGES),
    "ZeroPadding1D": (after_conv1d(lambda: L.ZeroPadding1D((1, 2))), SEQUENCES),
    "ZeroPadding2D": (after_conv2d(lambda: L.ZeroPadding2D(1)), IMAGES),
    "ZeroPadding3D": (on_volumes(lambda: L.ZeroPadding3D(1)), VOLUMES),
    "Cropping1D": (after_conv1d(lambda: L.Cropping1D((1, 0))), SEQUENCES),
    "Cropping2D": (after_conv2d(lambda: L.Cropping2D(((1, 0), (0, 2)))), IMAGES),
    "Cropping3D": (on_volumes(lambda: L.Cropping3D(1)), VOLUMES),
    "UpSampling1D": (after_conv1d(lambda: L.UpSampling1D(2)), SEQUENCES),
    "UpSampling2D": (after_conv2d(lambda: L.UpSampling2D((2, 3))), IMAGES),
    "UpSampling3D": (on_volumes(lambda: L.UpSampling3D(2)), VOLUMES),
    "Subtract": (merged(L.Subtract), VECTORS),
    "Multiply": (merged(L.Multiply), VECTORS),
    "Average": (merged(L.Average), VECTORS),
    "Maximum": (merged(L.Maximum), VECTORS),
    "Minimum": (merged(L.Minimum), VECTORS),
    "Embedding": (
        lambda: mk.Sequential(
            [
                Input((5,), dtype="int64"),
                L.Embedding(10, 3),
                Flatten(),
                Dense(2),
            ]
        ),  # fmt: skip
        IDS,
    ),
}


def train(make, x, y, jit_compile, epochs=3, batch_size=16):
    mk.utils.set_random_seed(7)
    model = make()
    model.compile("adam", "mse", jit_compile=jit_compile)
    history = model.fit(x, y, batch_size=batch_size, epochs=epochs, verbose=0, shuffle=False)
    return model, history.history


def assert_same_training(make, x, y=TARGETS, **kwargs):
    """Trains twice, compiled and eager; returns the compiled model after comparing them."""
    compiled, compiled_history = train(make, x, y, "auto", **kwargs)
    eager, eager_history = train(make, x, y, False, **kwargs)
    assert compiled_history == eager_history
    for got, want in zip(compiled.weights, eager.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)
    for got, want in zip(compiled.optimizer.variables, eager.optimizer.variables):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.name)
    return compiled


def programs(model):
    return list(model._compiled_step.programs.values())


@pytest.mark.filterwarnings("ignore:LayerNormalization. rms_scaling")
@pytest.mark.parametrize("name", list(CASES))
def test_an_admitted_layer_is_replayed_and_trains_as_eagerly(name):
    make, x = CASES[name]
    layer_class = getattr(L, name.split("-")[0])
    assert layer_class in REPLAYABLE_LAYERS
    model = assert_same_training(make, x)
    assert model._compiled_step.reason is None
    # Two kinds of batch (16 and the last 8): both recorded, both replayed after.
    assert [type(program) for program in programs(model)] == [Program, Program]


def test_replays_are_what_trains_the_later_batches(monkeypatch):
    # The step of a model of admitted layers runs eagerly once per kind of batch only.
    calls = []
    make, x = CASES["LayerNormalization"]
    original = L.LayerNormalization.call

    def counted(self, inputs):
        calls.append(inputs.shape)
        return original(self, inputs)

    monkeypatch.setattr(L.LayerNormalization, "call", counted)
    model, _ = train(make, x, TARGETS, "auto", epochs=3)
    assert isinstance(programs(model)[0], Program)
    assert [shape[0] for shape in calls] == [16, 8]  # (9 steps in all)


def test_an_out_of_range_id_in_a_replayed_step_raises_the_eager_error_and_changes_nothing():
    make, ids = CASES["Embedding"]
    model = make()
    model.compile("adam", "mse")
    model.train_on_batch(ids[:16], TARGETS[:16])
    model.train_on_batch(ids[:16], TARGETS[:16])
    assert isinstance(programs(model)[0], Program)
    before = [w.numpy().copy() for w in model.weights]
    slots = [v.numpy().copy() for v in model.optimizer.variables]
    for bad_id in (10, -1):
        bad = ids[:16].copy()
        bad[3, 2] = bad_id
        message = r"Embedding 'embedding.*': embedding_lookup expects ids in \[0, 10\)"
        with pytest.raises(ValueError, match=message):
            model.train_on_batch(bad, TARGETS[:16])
    for weight, value in zip(model.weights, before):
        np.testing.assert_array_equal(weight.numpy(), value)
    for variable, value in zip(model.optimizer.variables, slots):
        np.testing.assert_array_equal(variable.numpy(), value)
    model.train_on_batch(ids[:16], TARGETS[:16])  # and the program still serves good ids
    assert isinstance(programs(model)[0], Program)


@pytest.mark.parametrize(
    "make, x",
    [
        # A mask made from the integer ids is no recorded op's output.
        (
            lambda: mk.Sequential(
                [
                    Input((5,), dtype="int64"),
                    L.Embedding(10, 3, mask_zero=True),
                    L.GlobalAveragePooling1D(),
                    Dense(2),
                ]
            ),  # fmt: skip
            IDS,
        ),
        # Bilinear weights are made in Python, from the shapes, outside the ops.
        (after_conv2d(lambda: L.UpSampling2D(2, interpolation="bilinear")), IMAGES),
    ],
    ids=["masked-pooling", "bilinear"],
)
def test_an_array_made_outside_the_ops_refuses_the_recording_and_trains_eagerly(make, x):
    model = assert_same_training(make, x)
    assert programs(model)
    assert all("outside the recorded ops" in reason for reason in programs(model))
