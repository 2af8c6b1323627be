"""optimizers.MultiOptimizer and optimizers.OptimizerMap: each variable with its own optimizer."""

import numpy as np
import pytest

import minikeras as mk

optimizers = mk.optimizers


def test_map_lookup_exact_then_full_patterns_then_default():
    adam, sgd, rms = optimizers.Adam(), optimizers.SGD(), optimizers.RMSprop()
    mapping = optimizers.OptimizerMap(rms)
    mapping["encoder/layer_0/dense"] = adam
    mapping["encoder/.*"] = sgd
    mapping["decoder"] = adam
    assert mapping["decoder"] is adam
    assert mapping["encoder/layer_0/dense"] is adam  # exact key first, though the pattern matches
    assert mapping["encoder/layer_0/attention/query"] is sgd
    assert mapping["decoder/layer_0/dense"] is rms  # "decoder" is matched in full only
    assert len(mapping) == 3 and list(mapping) == ["encoder/layer_0/dense", "encoder/.*", "decoder"]
    mapping["enc.*"] = rms
    with pytest.raises(ValueError, match="more than one pattern"):
        mapping["encoder/x"]


def test_map_refuses_bad_keys_and_values():
    mapping = optimizers.OptimizerMap(optimizers.SGD(), {"a": optimizers.Adam()})
    with pytest.raises(ValueError, match="already in the map"):
        mapping["a"] = optimizers.SGD()
    with pytest.raises(ValueError, match="string"):
        mapping[1] = optimizers.SGD()
    with pytest.raises(ValueError, match="expected an Optimizer"):
        mapping["b"] = "adam"
    with pytest.raises(ValueError, match="inside a MultiOptimizer"):
        mapping["c"] = optimizers.MultiOptimizer(optimizers.OptimizerMap(optimizers.SGD()))
    with pytest.raises(ValueError, match="LossScaleOptimizer cannot be inside"):
        mapping["d"] = optimizers.LossScaleOptimizer(optimizers.SGD())
    with pytest.raises(TypeError, match="default_optimizer"):
        optimizers.OptimizerMap("sgd")
    with pytest.raises(TypeError, match="optimizer_map"):
        optimizers.OptimizerMap(optimizers.SGD(), [("a", optimizers.SGD())])


def test_apply_hands_each_optimizer_its_variables():
    kernel = mk.Variable(np.array([1.0, 2.0], "float32"), name="kernel")
    bias = mk.Variable(np.array([1.0], "float32"), name="bias")
    adam, sgd = optimizers.Adam(0.1), optimizers.SGD(0.5)
    multi = optimizers.MultiOptimizer(optimizers.OptimizerMap(sgd, {"bias": adam}))
    for _ in range(2):
        multi.apply([np.array([1.0, -1.0]), np.array([3.0])], [kernel, bias])
    np.testing.assert_allclose(kernel.numpy(), [1.0 - 2 * 0.5, 2.0 + 2 * 0.5])
    np.testing.assert_allclose(bias.numpy(), [1.0 - 0.2], rtol=1e-6)  # Adam: lr * sign(g), twice
    assert [int(o.iterations.numpy()) for o in (multi, adam, sgd)] == [2, 2, 2]
    assert multi.optimizers == [adam, sgd]
    names = [v.name for v in multi.variables]
    assert names[:2] == ["iteration", "learning_rate"] and "bias_momentum" in names


def test_bad_gradient_raises_before_any_update():
    a, b = mk.Variable([1.0], name="a"), mk.Variable([1.0, 1.0], name="b")
    multi = optimizers.MultiOptimizer(lambda v: first if v.name == "a" else second)
    first, second = optimizers.SGD(1.0), optimizers.SGD(1.0)
    with pytest.raises(ValueError, match="shape"):
        multi.apply([np.ones(1), np.ones(3)], [a, b])
    assert a.numpy().tolist() == [1.0] and int(multi.iterations.numpy()) == 0
    with pytest.raises(ValueError, match="not one it was built for"):
        multi.apply([np.ones(1)], [mk.Variable([0.0], name="c")])
    with pytest.raises(ValueError, match="2 gradients for 1 variables"):
        multi.apply([np.ones(1), np.ones(1)], [a])


def test_callable_map_and_bad_values():
    fast, slow = optimizers.SGD(1.0), optimizers.SGD(0.0)
    multi = optimizers.MultiOptimizer(lambda v: fast if v.name == "fast" else slow)
    w_fast, w_slow = mk.Variable([0.0], name="fast"), mk.Variable([0.0], name="slow")
    multi.apply([np.ones(1), np.ones(1)], [w_fast, w_slow])
    assert w_fast.numpy().tolist() == [-1.0] and w_slow.numpy().tolist() == [0.0]
    assert multi.optimizers == [fast, slow]
    with pytest.raises(ValueError, match="expected an Optimizer"):
        optimizers.MultiOptimizer(lambda v: "sgd").build([mk.Variable([0.0])])


def test_no_learning_rate_and_no_loss_scaling():
    multi = optimizers.MultiOptimizer(optimizers.OptimizerMap(optimizers.SGD()))
    with pytest.raises(AttributeError, match="inner optimizers"):
        _ = multi.learning_rate
    with pytest.raises(AttributeError, match="inner optimizers"):
        multi.learning_rate = 0.1
    with pytest.raises(ValueError, match="loss_scale_factor"):
        optimizers.MultiOptimizer(optimizers.OptimizerMap(optimizers.SGD()), loss_scale_factor=2.0)


def test_fit_trains_each_layer_with_its_optimizer():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype("float32")
    y = x @ rng.normal(size=(3, 1)).astype("float32")
    model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(4), mk.layers.Dense(1, name="head")])
    frozen = optimizers.SGD(0.0)
    multi = optimizers.MultiOptimizer(
        optimizers.OptimizerMap(optimizers.Adam(0.01), {"head/.*": frozen})
    )
    model.compile(multi, "mse", report_unchanged=False)  # (the head is frozen on purpose)
    head_before = [w.numpy() for w in model.layers[1].weights]
    body_before = [w.numpy() for w in model.layers[0].weights]
    history = model.fit(x, y, epochs=3, batch_size=8, verbose=0)
    assert all(np.array_equal(a, w.numpy()) for a, w in zip(head_before, model.layers[1].weights))
    assert not any(
        np.array_equal(a, w.numpy()) for a, w in zip(body_before, model.layers[0].weights)
    )
    assert int(multi.iterations.numpy()) == 12 and int(frozen.iterations.numpy()) == 12
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_config_round_trip():
    multi = optimizers.MultiOptimizer(
        optimizers.OptimizerMap(optimizers.SGD(0.5), {"dense/.*": optimizers.Adam(0.25)}), name="m"
    )
    again = optimizers.deserialize(optimizers.serialize(multi))
    assert type(again) is optimizers.MultiOptimizer and again.name == "m"
    assert [type(o).__name__ for o in again.optimizers] == ["Adam", "SGD"]
    assert [float(o.learning_rate.numpy()) for o in again.optimizers] == [0.25, 0.5]
    with pytest.raises(ValueError, match="multioptimizer"):  # (it needs its map)
        optimizers.get("multioptimizer")


def test_same_numbers_and_config_as_keras():
    keras = pytest.importorskip("keras")
    rng = np.random.default_rng(1)
    start = [rng.normal(size=(3, 2)).astype("float32"), rng.normal(size=(2,)).astype("float32")]
    grads = [[rng.normal(size=w.shape).astype("float32") for w in start] for _ in range(3)]
    results = []
    for lib in (mk, keras):
        variables = [lib.Variable(start[0], name="kernel"), lib.Variable(start[1], name="bias")]
        multi = lib.optimizers.MultiOptimizer(
            lib.optimizers.OptimizerMap(
                lib.optimizers.SGD(0.1, momentum=0.9), {"b.*": lib.optimizers.Adam(0.05)}
            )
        )
        for step in grads:
            multi.apply(step, variables)
        results.append([np.asarray(v.numpy()) for v in variables])
        results.append(int(np.asarray(multi.iterations.numpy())))
    for ours, theirs in zip(results[0], results[2]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert results[1] == results[3] == 3
    ours = optimizers.MultiOptimizer(
        optimizers.OptimizerMap(optimizers.SGD(0.5), {"b.*": optimizers.Adam()})
    )
    loaded = keras.optimizers.deserialize(optimizers.serialize(ours))
    assert [type(o).__name__ for o in loaded.optimizers] == ["Adam", "SGD"]
