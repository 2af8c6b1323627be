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
from test_compiled_step import assert_same_training as same_training
from test_compiled_step import programs, train

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


def on_sequences(layer, flatten=True):
    head = [Flatten()] if flatten else []
    return lambda: mk.Sequential([Input((5, 4)), layer(), *head, Dense(2)])


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
    "Conv3D": (on_volumes(lambda: L.Conv3D(3, 2, activation="relu")), VOLUMES),
    "Conv3D-strided-same": (on_volumes(lambda: L.Conv3D(2, 3, strides=2, padding="same")), VOLUMES),
    "Conv3DTranspose": (on_volumes(lambda: L.Conv3DTranspose(2, 2, strides=2)), VOLUMES),
    "MaxPooling3D": (on_volumes(lambda: L.MaxPooling3D(2)), VOLUMES),
    "AveragePooling3D": (on_volumes(lambda: L.AveragePooling3D(2, padding="same")), VOLUMES),
    "GlobalAveragePooling3D": (on_volumes(L.GlobalAveragePooling3D), VOLUMES),
    "GlobalMaxPooling3D": (on_volumes(L.GlobalMaxPooling3D), VOLUMES),
    "GroupNormalization": (after_dense(lambda: L.GroupNormalization(groups=1)), VECTORS),
    "GroupNormalization-images": (
        after_conv2d(lambda: L.GroupNormalization(groups=3, axis=-1)),
        IMAGES,
    ),
    "UnitNormalization": (after_dense(L.UnitNormalization), VECTORS),
    "Bidirectional": (on_sequences(lambda: L.Bidirectional(L.LSTM(3)), flatten=False), SEQUENCES),
    "Bidirectional-sum-of-sequences": (
        on_sequences(lambda: L.Bidirectional(L.GRU(3, return_sequences=True), merge_mode="sum")),
        SEQUENCES,
    ),
    "Bidirectional-over-a-cell": (
        on_sequences(lambda: L.Bidirectional(L.RNN(L.GRUCell(3))), flatten=False),
        SEQUENCES,
    ),
    "TimeDistributed": (on_sequences(lambda: L.TimeDistributed(Dense(3))), SEQUENCES),
    "RNN": (on_sequences(lambda: L.RNN(L.LSTMCell(3)), flatten=False), SEQUENCES),
    "RNN-backwards-sequences": (
        on_sequences(lambda: L.RNN(L.GRUCell(3), go_backwards=True, return_sequences=True)),
        SEQUENCES,
    ),
    "StackedRNNCells": (
        on_sequences(lambda: L.RNN([L.LSTMCell(3), L.GRUCell(2)]), flatten=False),
        SEQUENCES,
    ),
    "StackedRNNCells-backwards-sequences": (
        on_sequences(
            lambda: L.RNN(
                L.StackedRNNCells([L.SimpleRNNCell(3), L.LSTMCell(2)]),
                go_backwards=True,
                return_sequences=True,
            )
        ),
        SEQUENCES,
    ),
    "RMSNormalization": (after_dense(L.RMSNormalization), VECTORS),
    "RMSNormalization-two-axes": (
        after_conv1d(lambda: L.RMSNormalization(axis=[2, 1])),
        SEQUENCES,
    ),
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


def assert_same_training(make, x, **kwargs):
    """Trains with mse, compiled and eager, and compares (`test_compiled_step`'s check)."""
    return same_training(make, "mse", x, TARGETS, **kwargs)


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
    model, _ = train(make, "mse", x, TARGETS, "auto")
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
        # The same mask, reaching both directions of a Bidirectional LSTM.
        (
            lambda: mk.Sequential(
                [
                    Input((5,), dtype="int64"),
                    L.Embedding(10, 3, mask_zero=True),
                    L.Bidirectional(L.LSTM(3)),
                    Dense(2),
                ]
            ),  # fmt: skip
            IDS,
        ),
        # An input dropout mask drawn in Python, inside a Bidirectional.
        (on_sequences(lambda: L.Bidirectional(L.LSTM(3, dropout=0.2)), flatten=False), SEQUENCES),
    ],
    ids=["masked-pooling", "bilinear", "masked-bidirectional", "bidirectional-input-dropout"],
)
def test_an_array_made_outside_the_ops_refuses_the_recording_and_trains_eagerly(make, x):
    model = assert_same_training(make, x)
    assert programs(model)
    assert all("outside the recorded ops" in reason for reason in programs(model))


def bn_mlp(**options):
    return lambda: mk.Sequential([Input((6,)), Dense(5), L.BatchNormalization(**options), Dense(2)])


def bn_cnn(**options):
    return lambda: mk.Sequential([
        Input((6, 6, 2)), Conv2D(3, 3), L.BatchNormalization(**options), L.ReLU(),
        L.GlobalAveragePooling2D(), Dense(2),
    ])  # fmt: skip


@pytest.mark.parametrize(
    "make, x",
    [
        (bn_mlp(), VECTORS),
        (bn_mlp(momentum=0.5, center=False, scale=False), VECTORS),
        (bn_cnn(), IMAGES),
        (bn_cnn(axis=1, epsilon=0.1), IMAGES),
    ],
    ids=["mlp", "momentum-no-center-no-scale", "cnn", "cnn-axis-1"],
)
def test_batch_normalization_replays_its_moving_statistics_update(make, x):
    # The weights compared include the moving mean and variance, assigned at each replay.
    model = assert_same_training(make, x, epochs=4)
    assert [type(program) for program in programs(model)] == [Program, Program]
    assert all(len(program.assigned) == 2 for program in programs(model))
    norm = next(layer for layer in model.layers if isinstance(layer, L.BatchNormalization))
    assert not np.any(norm.moving_mean.numpy() == 0.0)  # (moved at every step)


@pytest.mark.parametrize("make, x", [(bn_mlp, VECTORS), (bn_cnn, IMAGES)], ids=["mlp", "cnn"])
def test_a_frozen_batch_normalization_is_replayed_in_inference_mode(make, x):
    # As in Keras, trainable=False runs with the moving statistics, which stay as they
    # are; its weights are data to the replay, read afresh (one primitive reads them all).
    model = assert_same_training(make(trainable=False), x)
    assert [type(program) for program in programs(model)] == [Program, Program]
    assert all(not program.assigned and program.frozen for program in programs(model))
    norm = next(layer for layer in model.layers if isinstance(layer, L.BatchNormalization))
    np.testing.assert_array_equal(norm.moving_mean.numpy(), 0.0)


def test_new_statistics_set_in_a_frozen_batch_normalization_are_read_by_the_replay():
    model = bn_mlp(trainable=False)()
    model.compile("sgd", "mse")
    eager = bn_mlp(trainable=False)()
    eager.compile("sgd", "mse", jit_compile=False)
    eager.set_weights(model.get_weights())
    for step in range(4):
        for each in (model, eager):
            norm = each.layers[1]
            norm.moving_mean.assign(np.full(5, 0.1 * step, "float32"))
            norm.moving_variance.assign(np.full(5, 1.0 + step, "float32"))
            each.train_on_batch(VECTORS[:16], TARGETS[:16])
    assert isinstance(programs(model)[0], Program)
    for got, want in zip(model.weights, eager.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)


def test_a_moving_statistic_follows_the_update_rule_at_each_replay():
    # Two steps by hand: moving = moving * momentum + batch statistic * (1 - momentum).
    model = bn_mlp(momentum=0.8)()
    model.compile("sgd", "mse")
    norm, dense = model.layers[1], model.layers[0]
    for step in range(3):
        batch = VECTORS[:16] + step
        hidden = batch @ dense.kernel.numpy() + dense.bias.numpy()
        mean, variance = norm.moving_mean.numpy(), norm.moving_variance.numpy()
        model.train_on_batch(batch, TARGETS[:16])
        np.testing.assert_allclose(
            norm.moving_mean.numpy(), mean * 0.8 + hidden.mean(0) * 0.2, rtol=1e-5
        )
        np.testing.assert_allclose(
            norm.moving_variance.numpy(), variance * 0.8 + hidden.var(0) * 0.2, rtol=1e-4
        )
    assert isinstance(programs(model)[0], Program)


def test_a_replay_that_gives_up_leaves_the_moving_statistics_alone():
    # The guard of a later op says no: the statistics are assigned only once all ops ran.
    model = mk.Sequential([
        Input((5,), dtype="int64"), L.Embedding(10, 3), Flatten(), L.BatchNormalization(),
        Dense(2),
    ])  # fmt: skip
    model.compile("sgd", "mse")
    for _ in range(2):
        model.train_on_batch(IDS[:16], TARGETS[:16])
    assert isinstance(programs(model)[0], Program)
    before = [w.numpy() for w in model.weights]
    bad = IDS[:16].copy()
    bad[0, 0] = 12
    with pytest.raises(ValueError, match="expects ids in"):
        model.train_on_batch(bad, TARGETS[:16])
    for weight, value in zip(model.weights, before):
        np.testing.assert_array_equal(weight.numpy(), value, err_msg=weight.path)


def shared_batch_normalization():
    # One layer called twice: its second update reads what the first assigned.
    inputs = Input((6,))
    norm = L.BatchNormalization()
    first = norm(Dense(5)(inputs))
    return mk.Model(inputs, Dense(2)(norm(Dense(5)(first))))


class AssignsThenReads(mk.layers.Layer):
    """Keeps a moving mean of its inputs and adds it: a read after the step's assign."""

    def build(self, input_shape):
        self.total = self.add_weight(
            "total", input_shape[-1:], initializer="zeros", trainable=False
        )

    def call(self, inputs):
        mean = mk.ops.mean(inputs, axis=0)
        self.total.assign(mk.ops.normalization.moving_average(self.total, mean, 0.5))
        return inputs + self.total


class AssignsATrainedWeight(mk.layers.Layer):
    """Assigns its own trained weight a value of the ops, which a replay would then
    have to differentiate as it was before the assign."""

    def build(self, input_shape):
        self.offset = self.add_weight("offset", input_shape[-1:], initializer="zeros")

    def call(self, inputs):
        outputs = inputs + self.offset
        mean = mk.ops.mean(inputs, axis=0)
        self.offset.assign(mk.ops.normalization.moving_average(self.offset, mean, 0.5))
        return outputs


@pytest.mark.parametrize(
    "layer, reason",
    [
        (AssignsThenReads, "computed outside the recorded ops"),
        (AssignsATrainedWeight, "Variable 'offset' is assigned, and differentiated"),
    ],
    ids=["read-after-assign", "trained-weight"],
)
def test_assignments_a_replay_could_not_repeat_refuse_the_recording(monkeypatch, layer, reason):
    from minikeras.trainers import compiled_step

    monkeypatch.setattr(compiled_step, "REPLAYABLE_LAYERS", REPLAYABLE_LAYERS | {layer})
    model = assert_same_training(lambda: mk.Sequential([Input((6,)), Dense(5), layer(), Dense(2)]),
                                 VECTORS)  # fmt: skip
    assert programs(model)
    assert all(reason in program for program in programs(model))


def test_a_batch_normalization_called_twice_in_a_step_is_refused_and_trains_eagerly():
    model = assert_same_training(shared_batch_normalization, VECTORS)
    assert programs(model)
    assert all("computed outside the recorded ops" in reason for reason in programs(model))


def test_a_model_trained_with_replayed_batch_normalization_predicts_as_the_eager_one():
    models = [train(bn_cnn(), "mse", IMAGES, TARGETS, jit)[0] for jit in ("auto", False)]
    compiled, eager = (model.predict(IMAGES, batch_size=16, verbose=0) for model in models)
    np.testing.assert_array_equal(compiled, eager)
    assert not np.array_equal(models[0].predict(IMAGES[:8], verbose=0), 0.0)


def test_batch_normalization_replays_beside_sample_weights():
    weights = np.random.default_rng(0).uniform(size=40).astype("float32")
    trained = []
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(7)
        model = bn_cnn()()
        model.compile("adam", "mse", jit_compile=jit_compile)
        history = model.fit(IMAGES, TARGETS, sample_weight=weights, batch_size=16, epochs=3,
                            verbose=0, shuffle=False)  # fmt: skip
        trained.append((model, history.history))
    (compiled, compiled_history), (eager, eager_history) = trained
    assert compiled_history == eager_history
    for got, want in zip(compiled.weights, eager.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)
    assert [type(program) for program in programs(compiled)] == [Program, Program]
