"""The compiled step with sample or class weights, integer inputs, and more losses.

Each case trains twice, with `jit_compile="auto"` (checked to have replayed:
every recorded kind of batch holds a `Program`) and with `jit_compile=False`,
and asks for the same losses, weights and optimizer slots bit for bit; what
is not replayed says why, and trains exactly as eagerly too.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.engine.replay import Program
from minikeras.layers import Add, Conv2D, Dense, Flatten, Input, MaxPooling2D

RNG = np.random.default_rng(11)
X = RNG.normal(size=(40, 6)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=40)
ONE_HOT = np.eye(3, dtype=np.float32)[LABELS]
BINARY = RNG.integers(0, 2, size=(40, 3)).astype(np.float32)
POSITIVE = RNG.uniform(0.1, 2.0, size=(40, 3)).astype(np.float32)
DISTRIBUTIONS = POSITIVE / POSITIVE.sum(axis=1, keepdims=True)
WEIGHTS = RNG.uniform(0.0, 3.0, size=40).astype(np.float32)
PIXELS = RNG.integers(0, 256, size=(24, 8, 8, 1)).astype(np.uint8)


def mlp(activation=None, inputs=6):
    return mk.Sequential([Input((inputs,)), Dense(8, activation="relu"), Dense(3, activation)])


def train(make, loss, x, y, jit_compile, epochs=3, **fit_args):
    mk.utils.set_random_seed(7)
    model = make()
    model.compile("adam", loss, jit_compile=jit_compile)
    history = model.fit(x, y, batch_size=16, epochs=epochs, verbose=0, shuffle=False, **fit_args)
    return model, history.history


def assert_same_training(make, loss, x, y, **fit_args):
    """Trains replayed and eagerly, compares bit for bit, returns the replayed model."""
    compiled, compiled_history = train(make, loss, x, y, "auto", **fit_args)
    eager, eager_history = train(make, loss, x, y, False, **fit_args)
    assert compiled_history == eager_history
    for got, want in zip(compiled.weights, eager.weights, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)
    for got, want in zip(compiled.optimizer.variables, eager.optimizer.variables, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.name)
    return compiled


def replayed(model):
    """Whether every kind of batch the model's step saw was recorded into a Program."""
    programs = model._compiled_step.programs
    return bool(programs) and all(type(program) is Program for program in programs.values())


# ------------------------------------------------------------ sample weights


@pytest.mark.parametrize(
    "loss, y, activation",
    [
        (mk.losses.SparseCategoricalCrossentropy(from_logits=True), LABELS, None),
        (mk.losses.CategoricalCrossentropy(from_logits=True), ONE_HOT, None),
        (mk.losses.BinaryCrossentropy(from_logits=True), BINARY, None),
        ("mse", POSITIVE, None),
        (mk.losses.MeanAbsoluteError(reduction="sum"), POSITIVE, None),
    ],
    ids=["sparse", "categorical", "binary", "mse", "mae-sum"],
)
def test_sample_weights_are_replayed_bit_for_bit(loss, y, activation):
    model = assert_same_training(lambda: mlp(activation), loss, X, y, sample_weight=WEIGHTS)
    assert replayed(model)
    # The weights are a third input: a signature names their shape and dtype.
    assert sorted(signature[4] for signature in model._compiled_step.programs) == [(8,), (16,)]


def test_weights_of_a_column_and_weights_of_zero_are_replayed_as_eagerly():
    # (n, 1) weights are squeezed or expanded by ops the tape records, on the watched weights.
    weights = WEIGHTS.copy()
    weights[16:32] = 0.0  # a whole batch weighing nothing: a loss of 0, gradients of 0
    model = assert_same_training(mlp, "mse", X, POSITIVE, sample_weight=weights[:, None])
    assert replayed(model)


def test_class_weights_are_replayed_bit_for_bit():
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model = assert_same_training(mlp, loss, X, LABELS, class_weight={0: 0.5, 1: 2.0, 2: 1.0})
    assert replayed(model)
    model = assert_same_training(
        mlp, mk.losses.CategoricalCrossentropy(from_logits=True), X, ONE_HOT,
        class_weight={0: 3.0, 2: 0.25},
    )  # fmt: skip
    assert replayed(model)


def test_train_on_batch_replays_sample_weights_and_refuses_none_of_their_values():
    results = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(3)
        model = mlp()
        model.compile("sgd", "mse", jit_compile=jit_compile)
        results[jit_compile] = [
            model.train_on_batch(X[:16], POSITIVE[:16], sample_weight=weights)
            for weights in (WEIGHTS[:16], WEIGHTS[16:32], np.zeros(16, np.float32))
        ]
        if jit_compile == "auto":
            assert replayed(model)
    assert results["auto"] == results[False]


def test_the_mean_with_sample_weight_reduction_runs_weighted_batches_eagerly():
    # Its Python divides by the weights' sum only if that is not 0: a branch on values.
    loss = mk.losses.MeanSquaredError(reduction="mean_with_sample_weight")
    weights = WEIGHTS.copy()
    weights[16:32] = 0.0
    model = assert_same_training(mlp, loss, X, POSITIVE, sample_weight=weights)
    assert model._compiled_step.programs == {}
    assert replayed(assert_same_training(mlp, loss, X, POSITIVE))  # unweighted: replayed


def test_the_weighted_mean_is_the_sum_times_one_over_the_count_as_before():
    # The reduction now takes ops.mean (one recorded op) where it took a sum and a
    # scaling: the same float32 numbers, loss and gradient.
    for size in (1, 7, 16, 33, 250):
        values = mk.Variable(RNG.normal(size=size).astype(np.float32) * 100)
        weights = RNG.uniform(0, 3, size).astype(np.float32)
        with mk.GradientTape() as tape:
            loss = mk.losses.reduce_weighted_values(values, weights)
        grad = tape.gradient(loss, values)
        with mk.GradientTape() as tape:
            before = mk.ops.sum(values * weights) * (1.0 / size)
        np.testing.assert_array_equal(loss.numpy(), before.numpy())
        np.testing.assert_array_equal(grad.numpy(), tape.gradient(before, values).numpy())


# ----------------------------------------------------------- integer inputs


def cnn():
    return mk.Sequential([
        Input((8, 8, 1)), Conv2D(3, 3, activation="relu"), MaxPooling2D(), Flatten(), Dense(3),
    ])  # fmt: skip


def flatten_first():
    inputs = Input((8, 8, 1))
    hidden = Dense(6, activation="relu")(Flatten()(inputs))
    return mk.Model(inputs, Dense(3)(hidden))


@pytest.mark.parametrize(
    "make, x",
    [
        (mlp, (X * 40).astype(np.int64)),
        (mlp, np.abs(X * 40).astype(np.uint8)),
        (cnn, PIXELS),
        (flatten_first, PIXELS.astype(np.int32)),
    ],
    ids=["mlp-int64", "mlp-uint8", "cnn-uint8", "flatten-dense-int32"],
)
def test_integer_inputs_are_cast_before_the_step_as_the_first_layer_casts_them(make, x):
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model = assert_same_training(make, loss, x, LABELS[: len(x)])
    assert model._compiled_step.casts_integers
    assert replayed(model)
    assert {signature[1] for signature in model._compiled_step.programs} == {np.dtype("float32")}


def integers_added():
    # Add on uint8 wraps around (200 + 200 = 144): a cast before it would change the sum.
    inputs = Input((6,))
    return mk.Model(inputs, Dense(3)(Add()([inputs, inputs])))


@pytest.mark.parametrize(
    "make",
    [integers_added, lambda: mk.Sequential([Input((6,), dtype="uint8"), Dense(3)])],
    ids=["add-first", "integer-input"],
)
def test_integer_inputs_stay_eager_where_the_model_reads_them_as_integers(make):
    x = RNG.integers(100, 256, size=(40, 6)).astype(np.uint8)
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    model = assert_same_training(make, loss, x, LABELS)
    assert not model._compiled_step.casts_integers
    assert not replayed(model)


# ----------------------------------------------------------------- losses


@pytest.mark.parametrize(
    "loss, y, activation",
    [
        (mk.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1), ONE_HOT, None),
        (mk.losses.CategoricalCrossentropy(label_smoothing=0.2), ONE_HOT, "softmax"),
        (mk.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1), BINARY, None),
        (mk.losses.BinaryCrossentropy(), BINARY, "sigmoid"),
        (mk.losses.BinaryCrossentropy(label_smoothing=0.3), BINARY, "sigmoid"),
        (mk.losses.KLDivergence(), DISTRIBUTIONS, "softmax"),
        (mk.losses.LogCosh(), POSITIVE, None),
        (mk.losses.Poisson(), POSITIVE, "softplus"),
        (mk.losses.MeanAbsolutePercentageError(), POSITIVE, None),
        (mk.losses.MeanSquaredLogarithmicError(), POSITIVE, "softplus"),
        (mk.losses.CosineSimilarity(), POSITIVE, None),
        (mk.losses.CategoricalHinge(), ONE_HOT, None),
        (mk.losses.Huber(delta=0.5), POSITIVE, None),
        ("huber", POSITIVE, None),
        ("kld", DISTRIBUTIONS, "softmax"),
        ("binary_crossentropy", BINARY, "sigmoid"),
        (mk.losses.Hinge(), BINARY, None),
        (mk.losses.SquaredHinge(), BINARY * 2 - 1, None),
        ("hinge", BINARY, None),
        ("squared_hinge", BINARY, None),
        (mk.losses.BinaryFocalCrossentropy(), BINARY, "sigmoid"),
        (mk.losses.BinaryFocalCrossentropy(from_logits=True, apply_class_balancing=True,
                                           label_smoothing=0.1, gamma=1.5), BINARY, None),
        (mk.losses.CategoricalFocalCrossentropy(), ONE_HOT, "softmax"),
        (mk.losses.CategoricalFocalCrossentropy(from_logits=True, gamma=3), ONE_HOT, None),
        ("binary_focal_crossentropy", BINARY, "sigmoid"),
    ],
    ids=[
        "cce-smoothing-logits", "cce-smoothing-probabilities", "bce-smoothing-logits",
        "bce-after-sigmoid", "bce-smoothing-probabilities", "kld", "log-cosh", "poisson",
        "mape", "msle", "cosine", "categorical-hinge", "huber", "huber-by-name", "kld-by-name",
        "bce-by-name", "hinge", "squared-hinge", "hinge-by-name", "squared-hinge-by-name",
        "focal", "focal-logits-balanced-smoothed", "categorical-focal", "categorical-focal-logits",
        "focal-by-name",
    ],
)  # fmt: skip
@pytest.mark.parametrize("weighted", [False, True], ids=["", "weighted"])
def test_losses_that_read_no_target_values_are_replayed_bit_for_bit(loss, y, activation, weighted):
    fit_args = {"sample_weight": WEIGHTS} if weighted else {}
    model = assert_same_training(lambda: mlp(activation), loss, X, y, **fit_args)
    assert model._compiled_step.reason is None
    assert replayed(model)


def test_targets_are_watched_only_for_the_losses_that_compute_on_them_alone():
    def watched(loss):
        model = mlp()
        model.compile("sgd", loss)
        model.train_on_batch(X[:4], ONE_HOT[:4])
        return model._compiled_step.watch_targets

    assert not watched(mk.losses.CategoricalCrossentropy(from_logits=True))
    assert not watched("mse")
    assert watched(mk.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1))
    assert watched(mk.losses.BinaryCrossentropy())
    assert not watched(mk.losses.BinaryCrossentropy(from_logits=True))


@pytest.mark.parametrize("weighted", [False, True], ids=["", "weighted"])
def test_a_loss_outside_the_replayable_set_trains_eagerly_and_says_why(weighted):
    fit_args = {"sample_weight": WEIGHTS} if weighted else {}
    model = assert_same_training(lambda: mlp("sigmoid"), mk.losses.Dice(), X, BINARY, **fit_args)
    assert "loss Dice is not replayable" in model._compiled_step.reason
    assert model._compiled_step.programs == {}


@pytest.mark.parametrize("weighted", [False, True], ids=["", "weighted"])
def test_a_focal_loss_with_an_alpha_per_class_trains_eagerly_and_says_why(weighted):
    # The per-class weights are an array made in Python, data a recording cannot place.
    fit_args = {"sample_weight": WEIGHTS} if weighted else {}
    loss = mk.losses.CategoricalFocalCrossentropy(from_logits=True, alpha=[0.2, 0.3, 0.5])
    model = assert_same_training(mlp, loss, X, ONE_HOT, **fit_args)
    assert model._compiled_step.reason is None and not replayed(model)
    refusals = set(model._compiled_step.programs.values())
    assert refusals == {"_multiply used an array computed outside the recorded ops"}


@pytest.mark.parametrize("loss", [mk.losses.Hinge(), mk.losses.SquaredHinge(), "hinge"])
def test_hinge_labels_of_0_and_1_in_one_batch_and_not_in_another_train_as_eagerly(loss):
    # Labels become -1/1 only if all of a batch's labels are 0 or 1, found inside one op
    # that each replay runs on its own batch: a replay that kept the first batch's
    # answer would train differently. Batches of 16: 0/1, then -1/1, then 0/-1 mixed.
    y = np.concatenate([BINARY[:16], BINARY[16:32] * 2 - 1, BINARY[32:] - 1])
    model = assert_same_training(mlp, loss, X, y)
    assert model._compiled_step.reason is None
    assert replayed(model)


def test_huber_is_quadratic_within_delta_and_linear_beyond_as_keras_writes_it():
    # Now computed from minimum(|error|, delta), with no comparison: the same losses and
    # gradients as Keras's `where(|error| <= delta, quadratic, linear)`, to a rounding.
    delta = 0.75
    y_true = RNG.normal(size=(64, 5)).astype(np.float32) * 2
    y_pred = mk.Variable(RNG.normal(size=(64, 5)).astype(np.float32) * 2)
    error = y_pred.numpy() - y_true
    keras_form = np.where(
        np.abs(error) <= delta, 0.5 * error**2, delta * np.abs(error) - 0.5 * delta**2
    ).mean(axis=-1)
    with mk.GradientTape() as tape:
        losses = mk.losses.huber(y_true, y_pred, delta=delta)
    np.testing.assert_allclose(losses.numpy(), keras_form, rtol=1e-6)
    slope = np.where(np.abs(error) <= delta, error, delta * np.sign(error)) / 5
    np.testing.assert_allclose(tape.gradient(losses, y_pred).numpy(), slope, rtol=1e-6)
    inside = mk.losses.huber([[0.0, 0.0]], [[0.5, -0.25]], delta=delta).numpy()
    np.testing.assert_array_equal(inside, [(0.125 + 0.03125) / 2])  # 0.5 e^2, exactly


def test_weighted_metrics_see_the_batch_weights_of_a_replayed_step():
    logs = {}
    for jit_compile in ("auto", False):
        mk.utils.set_random_seed(7)
        model = mlp()
        model.compile(
            "adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"], weighted_metrics=["accuracy"], jit_compile=jit_compile,
        )  # fmt: skip
        history = model.fit(X, LABELS, sample_weight=WEIGHTS, batch_size=16, epochs=2,
                            shuffle=False, verbose=0)  # fmt: skip
        logs[jit_compile] = history.history
        if jit_compile == "auto":
            assert replayed(model)
    assert logs["auto"] == logs[False]
    assert logs["auto"]["accuracy"] != logs["auto"]["weighted_accuracy"]


# ------------------------------------------------------------- ignore_class


def void_labels(void=-1):
    labels = LABELS.copy()
    labels[::3] = void
    labels[16:32] = void  # a batch with every sample ignored: a loss of 0
    return labels


@pytest.mark.parametrize(
    "void, column", [(-1, False), (1, False), (255, True)], ids=["minus-one", "a-class", "column"]
)
def test_ignore_class_from_logits_is_replayed_bit_for_bit(void, column):
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=void)
    labels = void_labels(void)
    model = assert_same_training(mlp, loss, X, labels[:, None] if column else labels)
    assert replayed(model)


def test_the_fused_ignoring_loss_equals_the_masked_losses_bit_for_bit():
    # Its numbers are those of the separate ops it replaces (where, the cross-entropy,
    # the mask's weights, the mean), loss and gradient.
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2)
    logits = mk.Variable(RNG.normal(size=(40, 3)).astype(np.float32) * 4)
    for labels in (void_labels(2), np.full(40, 2), LABELS):
        with mk.GradientTape() as tape:
            fused = loss(labels, logits)
        fused_grad = tape.gradient(fused, logits)
        with mk.GradientTape() as tape:
            masked = mk.losses.Loss.__call__(loss, labels, logits, None,
                                             loss._mask_ignored(labels, logits, None))  # fmt: skip
        np.testing.assert_array_equal(fused.numpy(), masked.numpy())
        np.testing.assert_array_equal(fused_grad.numpy(), tape.gradient(masked, logits).numpy())
    assert float(loss(np.full(40, 2), logits)) == 0.0


def test_a_label_out_of_range_in_a_replayed_ignoring_step_raises_the_eager_error():
    model = mlp()
    model.compile(
        "adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1)
    )
    labels = void_labels()
    model.train_on_batch(X[:16], labels[:16])
    model.train_on_batch(X[:16], labels[:16])
    assert replayed(model)
    before = [w.numpy().copy() for w in model.weights]
    bad = labels[:16].copy()
    bad[4] = 3
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        model.train_on_batch(X[:16], bad)
    for weight, value in zip(model.weights, before, strict=True):
        np.testing.assert_array_equal(weight.numpy(), value)


@pytest.mark.parametrize("weighted", [False, True], ids=["probabilities", "weighted"])
def test_ignore_class_trains_eagerly_where_its_python_finds_the_kept_labels(weighted):
    if weighted:
        loss, activation, fit_args = (
            mk.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=-1), None,
            {"sample_weight": WEIGHTS},
        )  # fmt: skip
    else:
        loss, activation, fit_args = (
            mk.losses.SparseCategoricalCrossentropy(ignore_class=-1), "softmax", {},
        )  # fmt: skip
    model = assert_same_training(lambda: mlp(activation), loss, X, void_labels(), **fit_args)
    assert not any(type(p) is Program for p in model._compiled_step.programs.values())
