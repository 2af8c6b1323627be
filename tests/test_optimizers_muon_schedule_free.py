"""optimizers.Muon and optimizers.ScheduleFreeAdamW: hand-computed steps, and Keras 3's numbers."""

import numpy as np
import pytest

import minikeras as mk

RNG = np.random.default_rng(0)
SHAPES = {"wide": (3, 5), "tall": (6, 2), "bias": (4,), "embedding_table": (5, 3), "head": (4, 2)}
START = {name: RNG.normal(size=shape).astype("float32") for name, shape in SHAPES.items()}
GRADS = [
    {name: RNG.normal(size=shape).astype("float32") for name, shape in SHAPES.items()}
    for _ in range(4)
]


def run(lib, make):
    """Four steps of `make()` on START with GRADS, in minikeras or Keras."""
    variables = [lib.Variable(START[name], name=name) for name in SHAPES]
    optimizer = make(lib)
    for grads in GRADS:
        optimizer.apply([grads[name] for name in SHAPES], variables)
    return {name: np.asarray(v.numpy()) for name, v in zip(SHAPES, variables)}


# ------------------------------------------------------------------- by hand


def test_muon_first_step_by_hand():
    # ns_steps=0 leaves the normalized Nesterov blend: (g + 0.95 g) / ||1.95 g||_F = g / ||g||_F,
    # times sqrt(max(rows, columns)) * rms_rate; then decay w * (1 - 0.004 * lr) first.
    w0, g = START["wide"], GRADS[0]["wide"]
    w = mk.Variable(w0)
    mk.optimizers.Muon(learning_rate=0.1, ns_steps=0).apply([g], [w])
    decayed = w0 - w0 * 0.004 * 0.1
    expected = decayed - 0.1 * g / np.sqrt((g.astype("float64") ** 2).sum()) * np.sqrt(5) * 0.2
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_muon_orthogonalizes_the_step():
    # Many Newton-Schulz steps push every singular value of the step near 1 (0.7..1.2 for
    # Keras's coefficients, which trade exactness for speed).
    w = mk.Variable(np.zeros((6, 4), "float32"))
    g = RNG.normal(size=(6, 4)).astype("float32") @ np.diag([10.0, 1.0, 0.1, 0.01]).astype(
        "float32"
    )
    opt = mk.optimizers.Muon(learning_rate=1.0, weight_decay=None, rms_rate=None, ns_steps=10)
    opt.apply([g], [w])
    singular = np.linalg.svd(-w.numpy(), compute_uv=False)
    assert np.all(singular > 0.6) and np.all(singular < 1.25), singular


def test_muon_uses_adamw_for_vectors_embeddings_and_excluded_layers():
    opt = mk.optimizers.Muon(exclude_layers=["head"])
    chosen = {name: opt._should_use_adamw(mk.Variable(START[name], name=name)) for name in SHAPES}
    assert chosen == {
        "wide": False, "tall": False, "bias": True, "embedding_table": True, "head": True,
    }  # fmt: skip
    # An AdamW weight's first step is lr * adam_lr_ratio * sign(g), after adam_weight_decay.
    w = mk.Variable(np.array([1.0, -2.0], "float32"))
    mk.optimizers.Muon(learning_rate=0.1, adam_lr_ratio=0.5, adam_weight_decay=0.5).apply(
        [np.array([3.0, -0.5], "float32")], [w]
    )
    np.testing.assert_allclose(w.numpy(), [1.0 * 0.95 - 0.05, -2.0 * 0.95 + 0.05], rtol=1e-5)


def test_schedule_free_two_steps_by_hand():
    b1, b2, lr, eps = 0.9, 0.999, 0.1, 1e-8
    y0 = np.array([1.0, -2.0])
    g1, g2 = np.array([0.5, 2.0]), np.array([-1.0, 0.25])
    z, v, y = y0.copy(), (1 - b2) * g1**2, y0
    x = (y - (1 - b1) * z) / b1
    z = z - lr * g1 / (np.sqrt(v / (1 - b2)) + eps)
    x = 0.0 * x + 1.0 * z
    y = (1 - b1) * z + b1 * x
    v = v + (g2**2 - v) * (1 - b2)
    x = (y - (1 - b1) * z) / b1
    z = z - lr * g2 / (np.sqrt(v / (1 - b2**2)) + eps)
    x = 0.5 * x + 0.5 * z
    y = (1 - b1) * z + b1 * x
    w = mk.Variable(y0.astype("float32"))
    opt = mk.optimizers.ScheduleFreeAdamW(learning_rate=lr)
    opt.apply([g1], [w])
    opt.apply([g2], [w])
    np.testing.assert_allclose(w.numpy(), y, rtol=1e-6)


def test_schedule_free_warmup_scales_the_learning_rate():
    w = mk.Variable(np.array([1.0], "float32"))
    mk.optimizers.ScheduleFreeAdamW(learning_rate=0.1, warmup_steps=4).apply([np.ones(1)], [w])
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.1 / 4], rtol=1e-6)  # lr * min(1/4, 1)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: mk.optimizers.ScheduleFreeAdamW(beta_1=0.0), "beta_1"),
        (lambda: mk.optimizers.ScheduleFreeAdamW(warmup_steps=-1), "warmup_steps"),
        (lambda: mk.optimizers.Muon(momentum=1.0), "momentum"),
        (lambda: mk.optimizers.Muon(ns_steps=2.5), "ns_steps"),
        (lambda: mk.optimizers.Muon(exclude_layers="head"), "exclude_layers"),
        (lambda: mk.optimizers.Muon(rms_rate=0), "rms_rate"),
    ],
)
def test_bad_arguments(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("name", ["Muon", "ScheduleFreeAdamW"])
def test_config_round_trip_and_get(name):
    cls = getattr(mk.optimizers, name)
    optimizer = cls(learning_rate=0.01)
    again = mk.optimizers.deserialize(mk.optimizers.serialize(optimizer))
    assert type(again) is cls and again.get_config() == optimizer.get_config()
    assert type(mk.optimizers.get(name.lower())) is cls


def test_both_train_a_model_with_fit():
    x = RNG.normal(size=(64, 4)).astype("float32")
    y = x @ RNG.normal(size=(4, 1)).astype("float32")
    for optimizer in (mk.optimizers.Muon(0.02), mk.optimizers.ScheduleFreeAdamW(0.02)):
        model = mk.Sequential([mk.Input((4,)), mk.layers.Dense(8), mk.layers.Dense(1)])
        model.compile(optimizer, "mse")
        history = model.fit(x, y, epochs=15, batch_size=16, verbose=0)
        assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]


# ------------------------------------------------------------------- against Keras


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"exclude_layers": ["head"], "nesterov": False, "rms_rate": None, "learning_rate": 0.05},
        {"weight_decay": None, "adam_weight_decay": 0.1, "adam_lr_ratio": 0.1, "ns_steps": 3},
    ],
)
def test_muon_matches_keras(kwargs):
    keras = pytest.importorskip("keras")
    ours = run(mk, lambda lib: mk.optimizers.Muon(**kwargs))
    theirs = run(keras, lambda lib: keras.optimizers.Muon(**kwargs))
    for name in SHAPES:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=2e-5, atol=2e-6, err_msg=name)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"learning_rate": 0.05, "warmup_steps": 3, "weight_decay": 0.1, "beta_1": 0.8}],
)
def test_schedule_free_matches_keras(kwargs):
    keras = pytest.importorskip("keras")
    ours = run(mk, lambda lib: mk.optimizers.ScheduleFreeAdamW(**kwargs))
    theirs = run(keras, lambda lib: keras.optimizers.ScheduleFreeAdamW(**kwargs))
    for name in SHAPES:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=2e-5, atol=2e-6, err_msg=name)
