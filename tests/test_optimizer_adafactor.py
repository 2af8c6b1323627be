"""optimizers.Adafactor: Keras 3's rule against a float64 numpy reference and against Keras
itself over several steps; its slots in Keras's order, config, and a model that trains."""

import os

import numpy as np
import pytest

import minikeras as mk
from minikeras import optimizers

RNG = np.random.default_rng(7)
SHAPES = [(3, 4), (4,), (2, 3, 5), ()]


def _rms(x):
    return np.sqrt(np.mean(np.square(x)))


def adafactor_reference(weights, steps, lr=0.001, decay=-0.8, eps1=1e-30, eps2=1e-3, clip=1.0):
    """Keras 3's Adafactor written out in float64, one variable at a time."""
    weights = [np.array(w, np.float64) for w in weights]
    state = [{} for _ in weights]
    for t, gradients in enumerate(steps, start=1):
        rho = min(lr, 1 / np.sqrt(t))
        beta = 1 - t**decay
        for w, g, slots in zip(weights, gradients, state):
            alpha = max(eps2, _rms(w)) * rho
            squared = np.square(g) + eps1
            if w.ndim >= 2:
                r = beta * slots.get("r", 0.0) + (1 - beta) * squared.mean(-1)
                c = beta * slots.get("c", 0.0) + (1 - beta) * squared.mean(-2)
                slots["r"], slots["c"] = r, c
                v = (r / r.mean(-1, keepdims=True))[..., None] * c[..., None, :]
            else:
                v = slots["v"] = beta * slots.get("v", 0.0) + (1 - beta) * squared
            u = g / np.sqrt(v)
            w -= alpha * u / max(1.0, _rms(u) / clip)
    return weights


ARGUMENTS = [
    {},
    {"learning_rate": 0.5},
    {"learning_rate": 0.05, "beta_2_decay": -0.5, "epsilon_2": 0.1, "clip_threshold": 0.5},
]


def _run(arguments, initial, steps):
    variables = [mk.Variable(w) for w in initial]
    optimizer = optimizers.Adafactor(**arguments)
    for gradients in steps:
        optimizer.apply(gradients, variables)
    return variables, optimizer


@pytest.mark.parametrize("arguments", ARGUMENTS)
def test_six_steps_match_the_rule_written_in_numpy(arguments):
    initial = [RNG.normal(size=s).astype("float32") for s in SHAPES]
    steps = [[RNG.normal(size=s).astype("float32") for s in SHAPES] for _ in range(6)]
    variables, _ = _run(arguments, initial, steps)
    names = {"learning_rate": "lr", "beta_2_decay": "decay", "epsilon_2": "eps2"}
    names["clip_threshold"] = "clip"
    want = adafactor_reference(initial, steps, **{names[k]: v for k, v in arguments.items()})
    for variable, expected, start in zip(variables, want, initial):
        assert variable.dtype == np.float32
        moved = np.abs(expected - start).max()
        np.testing.assert_allclose(variable.numpy(), expected, atol=1e-5 * moved + 1e-7)


def test_slots_in_keras_order_config_and_names():
    variables, optimizer = _run({}, [np.ones((3, 4), "float32"), np.ones(4, "float32")], [])
    optimizer.build(variables)
    shapes = [tuple(v.shape) for v in optimizer.variables]
    assert shapes == [(), (), (3,), (4,), (3, 4), (), (), (4,)]
    config = optimizer.get_config()
    assert config["beta_2_decay"] == -0.8 and config["epsilon_1"] == 1e-30
    assert config["epsilon_2"] == 1e-3 and config["clip_threshold"] == 1.0
    assert config["relative_step"] is True and config["learning_rate"] == pytest.approx(0.001)
    again = optimizers.deserialize(optimizers.serialize(optimizers.Adafactor(clip_threshold=2.0)))
    assert isinstance(again, optimizers.Adafactor) and again.clip_threshold == 2.0
    assert isinstance(optimizers.get("adafactor"), optimizers.Adafactor)
    with pytest.raises(ValueError, match="clip_threshold"):
        optimizers.Adafactor(clip_threshold=0.0)
    with pytest.raises(ValueError, match="epsilon_1"):
        optimizers.Adafactor(epsilon_1=-1.0)


def test_a_model_trains_with_it():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype("float32")
    y = x @ np.array([[1.5], [-2.0], [0.5]], "float32")
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(1)])
    model.compile(optimizer=optimizers.Adafactor(learning_rate=0.1), loss="mse")
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0).history["loss"]
    assert history[-1] < 0.05 * history[0]


@pytest.mark.parametrize("arguments", [*ARGUMENTS, {"learning_rate": 0.3, "weight_decay": 0.1}])
def test_same_steps_as_keras(arguments):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    initial = [RNG.normal(size=s).astype("float32") for s in SHAPES]
    steps = [[RNG.normal(size=s).astype("float32") for s in SHAPES] for _ in range(6)]
    theirs = [keras.Variable(w) for w in initial]
    keras_optimizer = keras.optimizers.Adafactor(**arguments)
    for gradients in steps:
        keras_optimizer.apply(gradients, theirs)
    ours, optimizer = _run(arguments, initial, steps)
    for mine, reference, start in zip(ours, theirs, initial):
        reference = keras.ops.convert_to_numpy(reference)
        moved = np.abs(reference - start).max()
        np.testing.assert_allclose(mine.numpy(), reference, atol=2e-5 * moved + 1e-7)
    assert [tuple(v.shape) for v in optimizer.variables] == [
        tuple(v.shape) for v in keras_optimizer.variables
    ]
    keras_config = keras_optimizer.get_config()
    for key, value in optimizer.get_config().items():
        if key in keras_config and key not in ("learning_rate", "name"):
            assert value == keras_config[key], key


def test_optimizer_state_crosses_to_keras_and_back(tmp_path):
    os.environ.setdefault("KERAS_BACKEND", "jax")
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(32, 3)).astype("float32"), rng.normal(size=(32, 2)).astype("float32")
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
    model.compile(optimizer=optimizers.Adafactor(learning_rate=0.1), loss="mse")
    model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    model.save(tmp_path / "ours.keras")
    theirs = keras.saving.load_model(tmp_path / "ours.keras")
    assert isinstance(theirs.optimizer, keras.optimizers.Adafactor)
    for mine, reference in zip(model.optimizer.variables, theirs.optimizer.variables):
        np.testing.assert_allclose(mine.numpy(), keras.ops.convert_to_numpy(reference))
    theirs.fit(x, y, epochs=1, batch_size=8, verbose=0)
    theirs.save(tmp_path / "theirs.keras")
    back = mk.models.load_model(tmp_path / "theirs.keras")
    assert int(back.optimizer.iterations.numpy()) == 12
    for mine, reference in zip(back.optimizer.variables, theirs.optimizer.variables):
        np.testing.assert_allclose(mine.numpy(), keras.ops.convert_to_numpy(reference))
