"""Subclassed models whose `call` is straight-line calls of their layers are replayed.

`models.plain_calls` reads the bytecode of `call` and accepts only what a
replay repeats exactly; everything else keeps the call eager. Accepted calls
must give bit for bit the eager numbers (custom loops, `fit`, `predict`),
and refused ones must run their Python at every call.
"""

import sys

import numpy as np
import pytest
from test_replayed_call import eager, train

import minikeras as mk
from minikeras import ops
from minikeras.engine.replay import Program
from minikeras.layers import Dense, Dropout
from minikeras.models import plain_calls
from minikeras.models.plain_calls import plain_call_reason
from minikeras.ops import relu
from minikeras.trainers import compiled_step

pytestmark = pytest.mark.skipif(
    sys.version_info[:2] not in plain_calls.BYTECODE_VERSIONS,
    reason="subclassed calls are read as CPython 3.11's bytecode",
)

RNG = np.random.default_rng(0)
X = RNG.normal(size=(16, 6)).astype(np.float32)
LABELS = RNG.integers(0, 3, size=16)
COUNTER = []
ACTIVATION = ops.relu  # (rebound by a test)


class Base(mk.Model):
    def __init__(self):
        super().__init__()
        self.hidden = Dense(8, activation="relu")
        self.drop = Dropout(0.3)
        self.out = Dense(3)
        self.scale = 0.5
        self.helpers = [Dense(2)]


class MLP(Base):
    def call(self, inputs):
        return self.out(self.hidden(inputs))


class Everything(Base):
    """Each accepted construct once."""

    def call(self, inputs, training=None):
        hidden = self.drop(self.hidden(inputs), training=training)
        width = hidden.shape[-1]
        mixed = ops.relu(hidden) * self.scale + hidden[:, :width] - relu(-hidden)
        joined = mk.ops.concatenate([mixed, inputs.T.T], axis=-1)
        return self.out(mk.activations.tanh(joined) / 2.0)


def make(cls):
    def build():
        model = cls()
        model(X[:2])  # built by a first call, as a custom loop builds it
        return model

    return build


def custom_loop(build, steps=5):
    """`test_replayed_call.train`'s losses, outputs, gradients and weights, and an inference."""
    model, seen, weights = train(build, X, steps)
    arrays = [array for loss, outputs, grads in seen for array in (loss, outputs, *grads)]
    return model, [*arrays, model(X).numpy(), *weights]


def recorded(model):
    calls = vars(model).get("_replayed_calls")
    return [] if calls is None else list(calls.programs.values())


@pytest.mark.parametrize("cls", [MLP, Everything], ids=["mlp", "every-construct"])
def test_a_plain_subclassed_call_is_replayed_bit_for_bit(cls, monkeypatch):
    model, replayed = custom_loop(make(cls))
    assert plain_call_reason(model) is None
    assert recorded(model) and all(type(p) is Program for p in recorded(model))
    eager(monkeypatch)
    eager_model, expected = custom_loop(make(cls))
    assert recorded(eager_model) == []
    assert len(replayed) == len(expected)
    for got, want in zip(replayed, expected):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_the_replay_is_one_node_and_skips_the_layers_python(monkeypatch):
    model = make(MLP)()
    calls = []
    original = Dense.call

    def counted(self, inputs):
        calls.append(1)
        return original(self, inputs)

    monkeypatch.setattr(Dense, "call", counted)
    for _ in range(4):
        with mk.GradientTape() as tape:
            outputs = model(X, training=True)
    # Recorded at the first (the building call was eager), then replayed: its two layers ran once.
    assert len(calls) == 2
    node = outputs._value._node
    assert node.parents == tuple(tape._nodes[id(w)] for w in model.trainable_weights)


def test_fit_compiles_a_plain_subclassed_model_bit_for_bit():
    def fitted(jit_compile):
        mk.utils.set_random_seed(0)
        model = make(Everything)()
        model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"], jit_compile=jit_compile)  # fmt: skip
        history = model.fit(X, LABELS, batch_size=8, epochs=3, verbose=0).history
        return model, history

    compiled, history = fitted("auto")
    eager_model, eager_history = fitted(False)
    assert compiled._compiled_step.reason is None
    assert all(type(p) is Program for p in compiled._compiled_step.programs.values())
    assert history == eager_history
    for got, want in zip(compiled.weights, eager_model.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_scalar_attribute_set_anew_records_the_call_again():
    model = make(Everything)()
    for _ in range(3):
        with mk.GradientTape():
            before = model(X, training=False)
    model.scale = 3.0
    with mk.GradientTape():
        after = model(X, training=False)
    expected = Everything.call(model, mk.Tensor(X), training=False)  # the Python, as written
    np.testing.assert_array_equal(after.numpy(), expected.numpy())
    assert not np.array_equal(before.numpy(), after.numpy())


class Printing(Base):
    def call(self, inputs):
        print("called")
        return self.out(inputs)


class Branching(Base):
    def call(self, inputs, training=None):
        if training:
            return self.out(inputs)
        return self.hidden(inputs)


class Looping(Base):
    def call(self, inputs):
        for scale in (1.0, 2.0):
            inputs = inputs * scale
        return self.out(inputs)


class Counting(Base):
    def call(self, inputs):
        self.count = getattr(self, "count", 0)
        return self.out(inputs)


class Appending(Base):
    def call(self, inputs):
        COUNTER.append(1)
        return self.out(inputs)


class ReadsValues(Base):
    def call(self, inputs):
        return self.out(inputs * float(ops.mean(inputs)))


class CallsNumpy(Base):
    def call(self, inputs):
        return self.out(inputs.numpy())


class UsesNumpy(Base):
    def call(self, inputs):
        return self.out(inputs * np.float32(2.0))


class CallsAHelper(Base):
    def helper(self, inputs):
        return self.out(inputs)

    def call(self, inputs):
        return self.helper(inputs)


class ReadsAWeight(Base):
    def call(self, inputs):
        return self.out(self.hidden(inputs)) + ops.sum(self.hidden.kernel)


class IndexesALayerList(Base):
    def call(self, inputs):
        return self.helpers[0](inputs)


class NotAMathOp(Base):
    def call(self, inputs):
        return self.out(ops.convert_to_numpy(inputs))


class Catching(Base):
    def call(self, inputs):
        try:
            return self.out(inputs)
        except ValueError:
            return inputs


class Closure(Base):
    def call(self, inputs):
        return self.out(mk.ops.relu((lambda: inputs)()))


class MakesAFunction(Base):
    def call(self, inputs):
        return self.out(inputs * (lambda: 2.0)())


class Comprehension(Base):
    def call(self, inputs):
        return self.out(mk.ops.concatenate([inputs for _ in range(2)], axis=-1))


class CallsSuper(MLP):
    def call(self, inputs):
        return super().call(inputs)


class StarArgs(Base):
    def call(self, inputs, *rest):
        return self.out(inputs)


class Builtin(Base):
    def call(self, inputs):
        return self.out(inputs[: len(inputs)])


@pytest.mark.parametrize(
    "cls, reason",
    [
        (Printing, "uses the builtin 'print'"),
        (Branching, "has a POP_JUMP"),
        (Looping, "has a GET_ITER"),
        (Counting, "uses the builtin 'getattr'"),
        (Appending, "reads 'COUNTER', not a minikeras module or math op"),
        (ReadsValues, "uses the builtin 'float'"),
        (CallsNumpy, "reads 'numpy' of a tensor"),
        (UsesNumpy, "reads the module 'numpy'"),
        (CallsAHelper, "reads self.helper, a class attribute, method or property"),
        (ReadsAWeight, "reads 'kernel' of a layer, function or Python value"),
        (IndexesALayerList, "reads self.helpers, a"),
        (NotAMathOp, "reads 'minikeras.ops.convert_to_numpy', not a minikeras module or math op"),
        (Catching, "handles exceptions"),
        (Closure, "uses a closure"),
        (MakesAFunction, "has a MAKE_FUNCTION"),
        (Comprehension, "uses a closure"),
        (CallsSuper, "calls super()"),
        (StarArgs, "takes *args"),
        (Builtin, "uses the builtin 'len'"),
    ],
)
def test_python_a_replay_would_skip_keeps_the_call_eager(cls, reason, capsys):
    model = make(cls)()
    assert reason in plain_call_reason(model)
    COUNTER.clear()
    for _ in range(4):
        with mk.GradientTape():
            model(X)
    assert recorded(model) == []
    assert reason in model._replayed_calls.reason
    if cls is Printing:
        assert capsys.readouterr().out.count("called") == 4 + 1  # (and the building call)
    if cls is Appending:
        assert len(COUNTER) == 4


def test_a_class_that_computes_its_own_masks_stays_eager():
    class Masking(MLP):
        def compute_mask(self, inputs, mask=None):
            return None

    model = make(Masking)()
    for _ in range(3):
        with mk.GradientTape():
            model(X)
    assert recorded(model) == []
    assert "compute_mask" in model._replayed_calls.reason


def test_another_python_version_keeps_every_subclassed_call_eager(monkeypatch):
    monkeypatch.setattr(plain_calls, "BYTECODE_VERSIONS", ())
    model = make(MLP)()
    assert "bytecode" in plain_call_reason(model)
    for _ in range(3):
        with mk.GradientTape():
            model(X)
    assert recorded(model) == []


def test_a_plain_subclassed_model_nested_in_a_sequential_replays_with_it(monkeypatch):
    def build():
        inner = MLP()
        model = mk.Sequential([mk.Input((6,)), inner, Dense(3)])
        return model

    model, replayed = custom_loop(build)
    assert recorded(model) and all(type(p) is Program for p in recorded(model))
    eager(monkeypatch)
    for got, want in zip(replayed, custom_loop(build)[1], strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_layer_the_model_does_not_track_keeps_the_call_eager(monkeypatch):
    # (minikeras finds a layer set past Layer.__setattr__ too: the guard is for what it misses)
    model = make(MLP)()
    monkeypatch.setattr(plain_calls.tracking, "tracked_layers", lambda model: [model.out])
    assert "self.hidden, a layer the model does not track" in plain_call_reason(model)


def test_integer_inputs_of_a_subclassed_model_are_not_cast_before_its_replay():
    # Which layer reads the inputs first is the call's to say, not the tracking order's.
    class Lookup(mk.Model):
        def __init__(self):
            super().__init__()
            self.out = Dense(3)  # tracked first, called last
            self.embed = mk.layers.Embedding(10, 4)

        def call(self, ids):
            return self.out(self.embed(ids))

    from minikeras.models.replayability import casts_integer_inputs

    model = Lookup()
    ids = np.array([[1, 2], [3, 9]])
    first = model(ids).numpy()
    assert not casts_integer_inputs(model)
    for _ in range(3):
        np.testing.assert_array_equal(model(ids).numpy(), first)


SETTINGS = {"scale": 2.0}


class DictDefault(Base):
    def call(self, inputs, config=SETTINGS):
        return self.out(inputs * config["scale"])


class RequiredArgument(Base):
    def call(self, inputs, extra):
        return self.out(inputs)


class Formats(Base):
    def call(self, inputs):
        return self.out(inputs * {"1": 1.0}["%d" % ops.sum(inputs)])  # noqa: UP031


class RepeatsAString(Base):
    def call(self, inputs):
        return self.out(inputs + len("ab" * ops.sum(inputs)))


class TensorTraining(Base):
    def call(self, inputs):
        return self.out(self.drop(inputs, training=ops.sum(inputs)))


class TensorAsAxis(Base):
    def call(self, inputs):
        return self.out(ops.sum(inputs, axis=ops.sum(inputs)))


class TensorAsShape(Base):
    def call(self, inputs):
        return self.out(ops.reshape(inputs, inputs))


class PrivateNumber(Base):
    def call(self, inputs):
        return self.out(inputs * self._latest_call)


class OwnGetattribute(MLP):
    def __getattribute__(self, name):
        return super().__getattribute__(name)


class Raising:
    def __getattr__(self, name):
        raise ValueError(f"unknown setting {name!r}")

    def __call__(self, x):
        return x


RAISING = Raising()


class CallsRaising(Base):
    def call(self, inputs):
        return self.out(RAISING(inputs))


@pytest.mark.parametrize(
    "cls, reason",
    [
        (DictDefault, "has a default for 'config' that is not a constant (dict)"),
        (RequiredArgument, "takes 'extra', an argument a replay cannot give"),
        (Formats, "computes % on a tensor and a value that is not a Python number"),
        (RepeatsAString, "uses the builtin 'len'"),
        (TensorTraining, "passes self.drop a training= that is not call's own"),
        (TensorAsAxis, "passes minikeras.ops.sum a tensor by keyword"),
        (TensorAsShape, "passes minikeras.ops.reshape a tensor where it takes a Python value"),
        (PrivateNumber, "reads self._latest_call, the model's bookkeeping"),
        (OwnGetattribute, "OwnGetattribute has a __getattribute__ of its own"),
        (CallsRaising, "reads 'RAISING', not a minikeras module or math op"),
    ],
)
def test_python_values_a_tensor_could_reach_are_refused(cls, reason):
    model = cls()
    assert reason in plain_call_reason(model)


def test_a_tensor_never_reaches_a_python_operation():
    class Repeats(Base):
        def call(self, inputs):
            return self.out(inputs * ("ab" * ops.sum(inputs)))

    class Indexes(Base):
        def call(self, inputs):
            return self.out(inputs * (1.0, 2.0)[ops.sum(inputs)])

    assert "computes * on a tensor and a value" in plain_call_reason(Repeats())
    assert "indexes with a tensor" in plain_call_reason(Indexes())


@pytest.mark.parametrize("kind", ["sequential", "functional"])
def test_a_model_with_a_graph_and_a_call_of_its_own_stays_eager(kind):
    class Doubled(mk.Sequential if kind == "sequential" else mk.Model):
        def call(self, inputs, training=None):
            return self.dense(inputs * 2)

    if kind == "sequential":
        model = Doubled([mk.Input((6,)), Dense(3)])
    else:
        inputs = mk.Input((6,))
        model = Doubled(inputs, Dense(3)(inputs))
    model.dense = model.layers[-1]
    codes = np.array([[200, 1, 2, 3, 4, 5]], np.uint8)
    first = model(codes).numpy()
    for _ in range(3):
        np.testing.assert_array_equal(model(codes).numpy(), first)
    assert "a graph and a call of its own" in model._replayed_calls.reason


def test_a_changed_call_default_or_name_records_again(monkeypatch):
    module = sys.modules[__name__]

    class Scaled(Base):
        def call(self, inputs, scale=2.0):
            return self.out(ACTIVATION(inputs) * scale)

    model = make(Scaled)()

    def called():
        with mk.GradientTape():
            return model(X, training=False).numpy()

    def eager():
        return Scaled.call(model, mk.Tensor(X)).numpy()

    for _ in range(3):
        np.testing.assert_array_equal(called(), eager())
    monkeypatch.setattr(module, "ACTIVATION", ops.tanh)  # a module-level name rebound
    np.testing.assert_array_equal(called(), eager())
    monkeypatch.setattr(Scaled.call, "__defaults__", (3.0,))  # a default replaced
    np.testing.assert_array_equal(called(), eager())
    monkeypatch.setattr(Scaled, "call", lambda self, inputs: self.out(inputs))  # call replaced
    np.testing.assert_array_equal(called(), model.out(X).numpy())


@pytest.mark.parametrize("kind", ["subclassed", "sequential"])
def test_fit_records_again_when_a_callback_sets_what_call_reads(kind):
    class Tempered(Base):
        def call(self, inputs, training=None):
            return self.out(self.hidden(inputs)) / self.temperature

    class Anneal(mk.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if kind == "subclassed":
                self.model.temperature = self.model.temperature * 0.5
            else:
                self.model.layers[1].rate = 0.1 * (epoch + 1)

    def fitted(jit_compile):
        mk.utils.set_random_seed(0)
        if kind == "subclassed":
            model = Tempered()
            model.temperature = 2.0
        else:
            model = mk.Sequential([mk.Input((6,)), Dense(8), Dropout(0.0), Dense(3)])
        model.compile("adam", mk.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=jit_compile)  # fmt: skip
        history = model.fit(X, LABELS, batch_size=8, epochs=3, verbose=0, callbacks=[Anneal()])
        return model, history.history["loss"]

    compiled, losses = fitted("auto")
    assert compiled._compiled_step.reason is None
    assert losses == fitted(False)[1]


class Weighted(Base):
    def call(self, inputs):
        return self.out(inputs * self.loss_weights)


class Shaped(Base):
    def call(self, inputs):
        halves = mk.ops.reshape(inputs, (-1, 2, inputs.shape[1] // 2))
        return self.out(mk.ops.reshape(halves, (-1, inputs.shape[1])) * (inputs.shape[1] / 2))


class Swished(Base):
    def call(self, inputs):
        return self.out(mk.activations.silu(inputs))


def test_bookkeeping_names_are_refused_and_shape_arithmetic_and_aliases_accepted():
    weighted = Weighted()
    weighted.loss_weights = 3.0  # (compile's: set without a count, so never a replay's)
    assert "reads self.loss_weights, the model's bookkeeping" in plain_call_reason(weighted)
    for cls in (Shaped, Swished):  # (`int / int` is a number; silu is swish by another name)
        model, replayed = custom_loop(make(cls), steps=2)
        assert recorded(model) and all(type(p) is Program for p in recorded(model))


def test_a_nested_subclassed_model_is_checked_again_before_each_replay(monkeypatch):
    class Inner(mk.Model):
        def __init__(self):
            super().__init__()
            self.dense = Dense(4)

        def call(self, inputs, scale=2.0):
            return self.dense(inputs) * scale

    class Outer(mk.Model):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.out = Dense(3)

        def call(self, inputs):
            return self.out(self.inner(inputs))

    for outer in (make(Outer)(), mk.Sequential([mk.Input((6,)), Inner(), Dense(3)])):
        expected = outer(X).numpy()
        for _ in range(3):
            with mk.GradientTape():
                np.testing.assert_array_equal(outer(X, training=False).numpy(), expected)
        assert recorded(outer)
        monkeypatch.setattr(Inner.call, "__defaults__", (0.0,))
        with mk.GradientTape():
            np.testing.assert_array_equal(outer(X, training=False).numpy(), 0 * expected)
        monkeypatch.undo()


def test_fit_does_not_check_a_refused_model_again_at_every_batch(monkeypatch):
    class Counting(MLP):
        def call(self, inputs):
            self.calls = self.calls + 1  # an attribute set at every call
            return self.out(inputs)

    model = Counting()
    model.calls = 0
    checks = []
    real = compiled_step._not_compilable
    monkeypatch.setattr(compiled_step, "_not_compilable", lambda m: checks.append(1) or real(m))
    model.compile("sgd", "mse")
    model.fit(X, np.zeros((16, 3), np.float32), batch_size=4, epochs=2, verbose=0)
    assert "STORE_ATTR" in model._compiled_step.reason
    assert len(checks) == 1
