"""The fast paths of a custom training loop's step (issue #17), each against its general path.

Each fast path skips general machinery in the common case; the general path
still serves the rest. Both must give the same bits, and the checks that
protect users must still fire.
"""

import numpy as np
import pytest

import minikeras as mk
from minikeras.engine import variable_reads
from minikeras.engine.replay import Program
from minikeras.layers import Dense, Input

RNG = np.random.default_rng(0)
X = RNG.normal(size=(16, 6)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=16)


def mlp(frozen=False):
    model = mk.Sequential([Input((6,)), Dense(8, activation="relu"), Dense(3)])
    if frozen:
        model.layers[0].trainable = False
    return model


def loop(model, steps=4, before_step=None, optimizer=None):
    """A custom loop; returns per step (loss, gradients), and the final weights."""
    loss_fn = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = optimizer or mk.optimizers.SGD(0.1)
    seen = []
    for step in range(steps):
        with mk.GradientTape() as tape:
            if before_step is not None:
                before_step(tape, step)
            loss = loss_fn(LABELS, model(X, training=True))
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        seen.append((loss.numpy(), [g.numpy() for g in grads]))
    return seen, [w.numpy() for w in model.weights]


def assert_same_bits(a, b):
    (steps_a, weights_a), (steps_b, weights_b) = a, b
    for (loss_a, grads_a), (loss_b, grads_b) in zip(steps_a, steps_b, strict=True):
        np.testing.assert_array_equal(loss_a, loss_b)
        for got, want in zip(grads_a, grads_b, strict=True):
            np.testing.assert_array_equal(got, want)
    for got, want in zip(weights_a, weights_b, strict=True):
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------- a replayed call's weight reads


@pytest.mark.parametrize("frozen", [False, True])
def test_a_replayed_call_reads_its_weights_alike_with_or_without_read_observers(frozen):
    # Without observers the replay takes the weights' roots from the tape directly;
    # with one it reads each weight through `read_variable`, which tells the observer.
    weights = mlp(frozen).get_weights()

    def run(observe):
        model = mlp(frozen)
        model.set_weights(weights)
        seen = []
        if observe:
            variable_reads.add_read_observer(seen.append)
        try:  # (the last step's reads: a replayed call's, recorded at the second)
            result = loop(model, before_step=lambda tape, step: seen.clear())
        finally:
            if observe:
                variable_reads.remove_read_observer(seen.append)
        return result, seen, model

    fast, _, _ = run(False)
    general, seen, model = run(True)
    assert_same_bits(fast, general)
    assert [type(p) for p in model._replayed_calls.programs.values()] == [Program]
    # The replayed step told the observer of every weight, the frozen ones too.
    read = {id(variable) for variable in seen}
    assert all(id(w) in read for w in model.weights)
    if frozen:
        assert [len(g) for _, g in fast[0]] == [2] * 4


@pytest.mark.parametrize("observe", [False, True])
def test_a_replayed_call_with_a_watched_frozen_weight_runs_eagerly_either_way(observe):
    # (the tape watches a weight the recording read as data: the eager call differentiates it)
    model = mlp(frozen=True)
    kernel = model.layers[0].kernel
    if observe:
        variable_reads.add_read_observer(id)
    try:
        for step in range(3):  # (recorded at the second call, replayed from the third)
            with mk.GradientTape() as tape:
                if step == 2:
                    tape.watch(kernel)
                total = mk.ops.sum(model(X, training=True))
    finally:
        if observe:
            variable_reads.remove_read_observer(id)
    assert tape.gradient(total, kernel) is not None  # (a replay would give None)


def test_a_replayed_calls_generator_is_run_to_its_end_by_the_gradient(monkeypatch):
    # (dropped while suspended, a generator has a GeneratorExit thrown into it)
    started = []
    start = Program.start

    def keep(program, inputs, sources):
        result = start(program, inputs, sources)
        started.append(result[1])
        return result

    monkeypatch.setattr(Program, "start", keep)
    model = mlp()
    for _ in range(3):
        with mk.GradientTape() as tape:
            total = mk.ops.sum(model(X, training=True))
    (generator,) = started
    assert generator.gi_frame is not None  # suspended, waiting for the gradient
    grads = tape.gradient(total, model.trainable_weights)
    assert generator.gi_frame is None  # finished
    assert all(g is not None for g in grads)


@pytest.mark.parametrize(
    "kwargs, replayed",
    [({}, True), ({"training": True}, True), ({"training": None}, True), ({"training": 1}, False)],
)
def test_a_replayed_calls_training_argument_read_inline_or_by_call_training(kwargs, replayed):
    # (a bool is read inline; anything else goes through `call_training`, which refuses
    # what is not a bool or None: that call runs eagerly)
    model = mlp()
    for _ in range(3):  # (recorded at the second call, replayed from the third)
        with mk.GradientTape() as tape:
            out = model(X, **kwargs)
    node = out._value._node
    weights = model.trainable_weights
    assert (node.parents == tuple(tape._nodes[id(w)] for w in weights)) is replayed


# ----------------------------------------------------------------- tape.gradient


W = RNG.normal(size=(6, 3)).astype("float32")


def _gradients(target_of, output_gradients=None, sources_of=None):
    w = mk.Variable(W.copy())
    with mk.GradientTape() as tape:
        target = target_of(w)
    sources = [w] if sources_of is None else sources_of(w)
    return tape.gradient(target, sources, output_gradients=output_gradients)


@pytest.mark.parametrize(
    "target_of",
    [
        lambda w: mk.ops.sum(mk.ops.matmul(X, w) ** 2),  # a 0-d array
        lambda w: mk.ops.cross_entropy.mean_sparse_categorical_crossentropy(
            LABELS, mk.ops.matmul(X, w)
        ),  # a numpy scalar
    ],
)
def test_a_scalar_losss_seed_made_inline_gives_the_general_paths_bits(target_of):
    fast = _gradients(target_of)
    general = _gradients(target_of, output_gradients=np.ones((), "float32"))  # (`_seeds`)
    assert fast[0].dtype == general[0].dtype == np.float32
    np.testing.assert_array_equal(fast[0].numpy(), general[0].numpy())


def test_non_scalar_and_foreign_targets_take_the_general_path():
    summed = _gradients(lambda w: mk.ops.sum(mk.ops.matmul(X, w)))
    vector = _gradients(lambda w: mk.ops.matmul(X, w))  # summed first, as TensorFlow does
    np.testing.assert_array_equal(summed[0].numpy(), vector[0].numpy())
    assert _gradients(lambda w: mk.ops.sum(mk.Tensor(X)))[0] is None  # no node of this tape


def test_gradients_of_variables_and_of_tensors_keep_their_sources_dtype():
    # A float64 loss: the Variable's gradient comes back float32, through the fast check
    # of a Variable's dtype and through a Tensor source's general one alike.
    def target_of(w):
        return mk.ops.sum(mk.ops.cast(w, "float64") ** 2)

    fast = _gradients(target_of)
    tensors = _gradients(target_of, sources_of=lambda w: [w, mk.Tensor(X)])
    assert fast[0].dtype == tensors[0].dtype == np.float32
    np.testing.assert_array_equal(fast[0].numpy(), tensors[0].numpy())
    assert tensors[1] is None


# -------------------------------------------------------------------------- loss


def test_the_loss_object_gives_the_same_bits_on_a_tensor_and_on_an_array():
    logits = RNG.normal(size=(16, 3)).astype("float32")
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    np.testing.assert_array_equal(loss(LABELS, mk.Tensor(logits)).numpy(), loss(LABELS, logits))


def test_the_fused_loss_recorded_directly_matches_call_primitive():
    from minikeras.engine.primitive import call_primitive
    from minikeras.ops.cross_entropy import _mean_sparse_xent_logits

    logits = mk.Variable(RNG.normal(size=(16, 3)).astype("float32"))
    results = []
    for direct in (True, False):
        with mk.GradientTape() as tape:
            if direct:
                value = mk.ops.cross_entropy.mean_sparse_categorical_crossentropy(LABELS, logits)
            else:
                box = logits.value._value
                value = mk.Tensor(call_primitive(_mean_sparse_xent_logits, box, LABELS))
        results.append((value.numpy(), tape.gradient(value, logits).numpy()))
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)


def test_bad_labels_still_raise_the_losss_error_in_a_tape():
    loss = mk.losses.SparseCategoricalCrossentropy(from_logits=True)
    logits = mk.Variable(np.zeros((2, 3), "float32"))
    with mk.GradientTape(), pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        loss(np.array([0, 3]), logits.value)


# ------------------------------------------------------------------ dense's VJP


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dense_relu_gradients_pass_where_the_unit_is_alive(dtype):
    # float32: the product, inline; float16: select_gradient's select (an inf at a dead
    # unit gives 0, not NaN)
    x = np.array([[1.0, -1.0], [2.0, 0.5]], dtype)
    kernel = mk.Variable(np.array([[1.0, -1.0], [1.0, 1.0]], dtype), dtype=dtype)
    upstream = np.array([[3.0, np.inf], [5.0, 7.0]], dtype)
    with np.errstate(invalid="ignore"):  # (inf * 0 at the dead units: not checked)
        with mk.GradientTape() as tape:
            out = mk.ops.dense(x, kernel, None, "relu")  # [[0, 0], [2.5, 0]]: alive at (1, 0)
            total = mk.ops.sum(out * upstream)
        grad = tape.gradient(total, kernel).numpy()
    alive = out.numpy() > 0
    assert alive.tolist() == [[False, False], [True, False]]
    # d/dkernel = x.T @ (upstream where alive): only row 1, column 0 passes (5).
    want = x.T.astype("float64") @ np.where(alive, upstream, 0.0)
    if dtype == "float16":
        np.testing.assert_array_equal(grad, want.astype(dtype))
    else:  # (the product: inf * 0 at the dead unit is NaN, as select_gradient documents)
        assert np.isnan(grad[:, 1]).all()
        np.testing.assert_array_equal(grad[:, 0], want[:, 0].astype(dtype))


@pytest.mark.parametrize("watched", [False, True])
@pytest.mark.parametrize("use_bias", [False, True])
def test_dense_gradients_of_rows_match_those_of_a_sequence_of_one_step(watched, use_bias):
    # Rows of (batch, features) take the VJP's direct return of its two or three
    # gradients; a (batch, 1, features) sequence takes its general loop, on the same rows.
    x = RNG.normal(size=(5, 6)).astype("float32")
    kernel = RNG.normal(size=(6, 4)).astype("float32")
    bias = RNG.normal(size=4).astype("float32")
    results = []
    for shape in (x.shape, (5, 1, 6)):
        variables = [mk.Variable(kernel.copy())] + ([mk.Variable(bias.copy())] if use_bias else [])
        inputs = mk.Tensor(x.reshape(shape))
        with mk.GradientTape() as tape:
            if watched:
                tape.watch(inputs)
            out = mk.ops.dense(inputs, variables[0], variables[1] if use_bias else None, "relu")
            total = mk.ops.sum(out * out)
        sources = variables + ([inputs] if watched else [])
        results.append([g.numpy().reshape(-1) for g in tape.gradient(total, sources)])
    for got, want in zip(*results, strict=True):
        np.testing.assert_array_equal(got, want)
    # and by hand: d sum(relu(z)^2)/dkernel = x.T @ (2 relu(z))
    z = x @ kernel + (bias if use_bias else 0.0)
    np.testing.assert_allclose(results[0][0], (x.T @ (2 * np.maximum(z, 0))).reshape(-1), rtol=1e-5)


# ------------------------------------------------------------------- optimizers


def test_apply_gradients_takes_pairs_once_and_rejects_what_is_not_a_pair():
    w = mk.Variable([1.0, 2.0])
    optimizer = mk.optimizers.SGD(0.5)
    optimizer.apply_gradients(pair for pair in [(np.array([1.0, -1.0]), w)])  # a generator
    np.testing.assert_array_equal(w.numpy(), [0.5, 2.5])
    with pytest.raises(ValueError):
        optimizer.apply_gradients([(np.ones(2), w, "extra")])
    np.testing.assert_array_equal(w.numpy(), [0.5, 2.5])


class GeneralSGD(mk.optimizers.SGD):
    """SGD kept off the descent lane: `checked_updates` and `apply_update` at every step."""

    _descent_lane = None


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("kind", [mk.optimizers.SGD, GeneralSGD])
def test_small_variables_packed_beside_big_ones_follow_sgd_exactly(momentum, kind):
    # The small ones run packed (`FlatSlots`; SGD without momentum has no slots to
    # check), the big one alone, on the general path as on plain SGD's lane; the result
    # is each variable's own formula, bit for bit.
    from minikeras.optimizers._buffers import FLAT_MAX_SIZE

    shapes = [(3,), (FLAT_MAX_SIZE + 1,), (2, 2), (5,)]
    values = [RNG.normal(size=s).astype("float32") for s in shapes]
    grads = [RNG.normal(size=s).astype("float32") for s in shapes]
    variables = [mk.Variable(v.copy()) for v in values]
    optimizer = kind(0.1, momentum=momentum)
    for _ in range(3):
        optimizer.apply_gradients(zip(grads, variables))
    flat = optimizer._buffers.flat
    assert flat.indices == (0, 2, 3) and flat.others == (1,)
    for value, grad, variable in zip(values, grads, variables):
        velocity = np.zeros_like(value)
        for _ in range(3):
            if momentum:
                velocity = velocity * np.float32(momentum) + grad * np.float32(-0.1)
                value = value + velocity
            else:
                value = value + grad * np.float32(-0.1)
        if variable.shape == shapes[1]:  # (BLAS's axpy may round its product once)
            np.testing.assert_allclose(variable.numpy(), value, rtol=1e-6, atol=1e-7)
        else:
            np.testing.assert_array_equal(variable.numpy(), value)


def _sgd_run(kind, shapes, steps=3, hold=False, **kwargs):
    """Weights after `steps` SGD updates, each step's reads held or not; and the updates."""
    rng = np.random.default_rng(1)
    variables = [mk.Variable(rng.normal(size=s).astype("float32")) for s in shapes]
    grads = [[rng.normal(size=s).astype("float32") for s in shapes] for _ in range(steps)]
    optimizer = kind(0.1, **kwargs)
    held = []
    for step_grads in grads:
        if hold:  # a read (`.value`, no copy) and a Tensor of each weight, kept across the step
            held.append([(v.value, mk.ops.convert_to_tensor(v), v.numpy()) for v in variables])
        optimizer.apply_gradients(zip([mk.Tensor(g) for g in step_grads], variables))
    for reads in held:
        for value, tensor, copy in reads:  # what was read before a step keeps its value
            np.testing.assert_array_equal(value, copy)
            np.testing.assert_array_equal(tensor.numpy(), copy)
    return [v.numpy() for v in variables], optimizer


@pytest.mark.parametrize("hold", [False, True])
def test_plain_sgd_takes_the_descent_lane_with_the_general_paths_bits(hold, monkeypatch):
    from minikeras.optimizers import base
    from minikeras.optimizers._buffers import FLAT_MAX_SIZE

    general_updates = []
    general = base.apply_update
    monkeypatch.setattr(base, "apply_update", lambda *a: general_updates.append(1) or general(*a))
    shapes = [(3,), (FLAT_MAX_SIZE + 1,), (2, 2), (5,)]
    lane, lane_optimizer = _sgd_run(mk.optimizers.SGD, shapes, steps=4, hold=hold)
    assert not general_updates  # (the lane builds the optimizer on the first update too)
    reference, _ = _sgd_run(GeneralSGD, shapes, steps=4, hold=hold)
    assert len(general_updates) == 4
    for got, want in zip(lane, reference, strict=True):
        np.testing.assert_array_equal(got, want)
    assert int(lane_optimizer.iterations.numpy()) == 4


def test_the_descent_lane_writes_every_unshared_weight_in_place():
    # The first update packs the small ones (each then a view of one array); from then
    # on every array, the last one too, is written in place.
    variables = [mk.Variable(np.ones(s, np.float32)) for s in [(4, 3), (3,), (2,), (20000,)]]
    optimizer = mk.optimizers.SGD(0.25)
    grads = [np.ones(v.shape, np.float32) for v in variables]
    optimizer.apply_gradients(zip(grads, variables))
    ids = [id(variable._value) for variable in variables]
    bases = {id(v._value.base) for v in variables[:3]}  # (not the base itself: a holder)
    assert len(bases) == 1 and variables[0]._value.base is not None
    for _ in range(3):
        optimizer.apply_gradients(zip(grads, variables))
    assert [id(variable._value) for variable in variables] == ids
    for variable in variables:
        np.testing.assert_array_equal(variable.numpy(), np.zeros(variable.shape))


@pytest.mark.parametrize(
    "kwargs, variable_kwargs",
    [
        ({"momentum": 0.5}, {}),
        ({"clipnorm": 0.1}, {}),
        ({"clipvalue": 0.01}, {}),
        ({"global_clipnorm": 0.1}, {}),
        ({"weight_decay": 0.5}, {}),
        ({"use_ema": True}, {}),
        ({}, {"constraint": mk.constraints.NonNeg()}),  # (set on the Variables)
    ],
)
def test_sgd_with_anything_around_its_rule_leaves_the_descent_lane(
    kwargs, variable_kwargs, monkeypatch
):
    from minikeras.optimizers import base

    general_updates = []
    general = base.apply_update
    monkeypatch.setattr(base, "apply_update", lambda *a: general_updates.append(1) or general(*a))
    w, twin_w = mk.Variable([1.0, -2.0, 3.0]), mk.Variable([1.0, -2.0, 3.0])
    v, twin_v = mk.Variable([0.5, 0.5, 0.5]), mk.Variable([0.5, 0.5, 0.5])
    for variable in (w, v, twin_w, twin_v):
        for attribute, value in variable_kwargs.items():
            setattr(variable, attribute, value)
    optimizer, twin = mk.optimizers.SGD(0.1, **kwargs), GeneralSGD(0.1, **kwargs)
    grads = [np.array([1.0, 2.0, -3.0], np.float32), np.array([4.0, 0.0, 1.0], np.float32)]
    for _ in range(3):
        optimizer.apply_gradients(zip(grads, [w, v]))
        twin.apply_gradients(zip(grads, [twin_w, twin_v]))
    assert len(general_updates) == 6
    np.testing.assert_array_equal(w.numpy(), twin_w.numpy())
    np.testing.assert_array_equal(v.numpy(), twin_v.numpy())


def test_the_descent_lane_leaves_checks_casts_and_warnings_to_the_general_path():
    w, v = mk.Variable([1.0, 2.0], name="w"), mk.Variable([3.0], name="v")
    optimizer = mk.optimizers.SGD(0.5)
    optimizer.apply_gradients([(np.ones(2, np.float32), w), (np.ones(1, np.float32), v)])
    with pytest.raises(ValueError, match="'w' has shape \\(3,\\)"):
        optimizer.apply_gradients([(np.ones(3, np.float32), w), (np.ones(1, np.float32), v)])
    with pytest.raises(ValueError, match="got 1 gradients for 2 variables"):
        optimizer.apply([np.ones(2, np.float32)], [w, v])
    np.testing.assert_array_equal(w.numpy(), [0.5, 1.5])  # nothing changed
    with pytest.warns(mk.layers.tracking.TrackingWarning, match="'v' received no gradient"):
        optimizer.apply_gradients([(np.ones(2, np.float32), w), (None, v)])
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.0])
    optimizer.apply_gradients([(np.ones(2), w), (np.ones(1), v)])  # float64: cast
    assert w.dtype == "float32" and v.dtype == "float32"
    np.testing.assert_array_equal(w.numpy(), [-0.5, 0.5])
    optimizer.apply_gradients([(np.ones(1, np.float32), v), (np.ones(2, np.float32), w)])
    np.testing.assert_array_equal(v.numpy(), [1.5])  # (another order: the general path)
    assert int(optimizer.iterations.numpy()) == 4


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_small_weights_packed_large_enough_for_blas_take_it_on_the_lane_too(dtype, monkeypatch):
    # Packed, two (10000,) weights make 20000 entries: BLAS's axpy (one rounding)
    # updates them on the general path, and so on the lane, which packs them alike.
    from minikeras.optimizers import base

    general_updates = []
    general = base.apply_update
    monkeypatch.setattr(base, "apply_update", lambda *a: general_updates.append(1) or general(*a))
    results = []
    for kind in (mk.optimizers.SGD, GeneralSGD):
        rng = np.random.default_rng(5)
        variables = [mk.Variable(rng.normal(size=10000), dtype=dtype) for _ in range(2)]
        optimizer = kind(0.1)
        for _ in range(3):
            grads = [rng.normal(size=10000).astype(dtype) for _ in range(2)]
            optimizer.apply_gradients(zip(grads, variables))
        results.append([v.numpy() for v in variables])
    assert len(general_updates) == 3  # (GeneralSGD's alone)
    assert results[0][0].dtype == dtype
    for got, want in zip(*results, strict=True):
        np.testing.assert_array_equal(got, want)


def test_sgd_whose_momentum_is_set_to_0_after_build_keeps_updating_its_velocities():
    results = []
    for kind in (mk.optimizers.SGD, GeneralSGD):
        w = mk.Variable([1.0, 1.0])
        optimizer = kind(0.1, momentum=0.9)
        for momentum, g in [(0.9, 1.0), (0.0, 2.0), (0.9, 1.0)]:
            optimizer.momentum = momentum
            optimizer.apply_gradients([(np.full(2, g, np.float32), w)])
        results.append((w.numpy(), optimizer.momentums[0].numpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    np.testing.assert_allclose(results[0][1], [-0.28, -0.28], rtol=1e-6)


def test_a_subclass_with_its_own_apply_or_constants_never_takes_the_descent_lane():
    class Logged(mk.optimizers.SGD):
        calls = 0

        def apply(self, grads, trainable_variables=None):
            Logged.calls += 1
            return super().apply([g * 0 for g in grads], trainable_variables)

    class Warm(mk.optimizers.SGD):
        def _step_constants(self, learning_rate, step):
            return (learning_rate * min(1.0, step / 10),)

    assert Logged._descent_lane is None and Warm._descent_lane is None
    w = mk.Variable([1.0, 2.0])
    Logged(0.5).apply_gradients([(np.ones(2, np.float32), w)])
    assert Logged.calls == 1
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    w = mk.Variable([1.0])
    Warm(1.0).apply_gradients([(np.ones(1, np.float32), w)])
    np.testing.assert_allclose(w.numpy(), [0.9])  # 1 - 1.0 * (1 / 10) * 1


def test_a_subclass_with_its_own_rule_never_takes_the_descent_lane():
    class Doubled(mk.optimizers.SGD):
        def update_step(self, gradient, variable, learning_rate):
            self.assign_sub(variable, 2 * learning_rate * gradient)

    assert Doubled._descent_lane is None and mk.optimizers.SGD()._descent_lane
    w = mk.Variable([1.0])
    optimizer = Doubled(0.25)
    for _ in range(2):
        optimizer.apply_gradients([(np.ones(1, np.float32), w)])
    np.testing.assert_array_equal(w.numpy(), [0.0])  # 1 - 2 * 0.25, twice


# ------------------------------------------------------------------ layer calls


def test_a_layer_called_in_a_tape_on_a_float64_box_still_casts_it():
    layer = Dense(2, kernel_initializer="ones")
    x = mk.Tensor(np.ones((1, 3)))  # float64
    with mk.GradientTape() as tape:
        tape.watch(x)
        total = mk.ops.sum(layer(x))
    assert total.dtype == np.float32
    assert tape.gradient(total, x).numpy().tolist() == [[2.0, 2.0, 2.0]]


def test_an_input_spec_is_checked_on_a_boxed_input_in_a_tape():
    # (the input's shape read inline from its box: a wrong one still raises)
    layer = Dense(2)
    layer(np.ones((1, 3), "float32"))  # built for 3 features
    x = mk.Tensor(np.ones((2, 4), "float32"))
    with mk.GradientTape() as tape, pytest.raises(ValueError, match="3"):
        tape.watch(x)
        layer(x)


class _FrozenByProperty(mk.Variable):
    """A Variable whose own `trainable` says False (a subclass may define it)."""

    @property
    def trainable(self):
        return False


def test_a_tape_asks_a_variable_subclass_its_own_trainable():
    # (an exact Variable's flag is read directly; a subclass's through its property)
    plain, frozen = mk.Variable([1.0, 2.0]), _FrozenByProperty([1.0, 2.0])
    assert frozen._trainable  # (the flag the fast path would have read)
    with mk.GradientTape() as tape:
        total = mk.ops.sum(plain * frozen)
    grad_plain, grad_frozen = tape.gradient(total, [plain, frozen])
    assert grad_frozen is None
    np.testing.assert_array_equal(grad_plain.numpy(), [1.0, 2.0])
