"""Control flow ops: cond, switch, while_loop, fori_loop, scan, associative_scan, map,
vectorized_map, vectorize. Values and structures by hand and against Keras; gradients
through the loops against finite differences."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(3)
SEQ = RNG.normal(size=(5, 3)).astype("float32")
W = (RNG.normal(size=(3, 3)) * 0.5).astype("float32")


def _rnn_scan(xs, w):
    """A tanh recurrence by scan; the carry's final value plus the stacked states."""

    def step(h, x):
        h = ops.tanh(ops.matmul(h, w) + x)
        return h, h * 2.0

    carry, ys = ops.scan(step, ops.zeros((3,), dtype=xs.dtype), xs)
    return ops.concatenate([ops.expand_dims(carry, 0), ys], axis=0)


def _power_while(x):
    """x ** 4 by repeated squaring in a while loop, with a counter among the loop vars."""
    return ops.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * y), (0, x))[1]


GRADIENT_CASES = {
    "scan": (_rnn_scan, [SEQ, W]),
    "scan_reverse": (
        lambda xs: ops.scan(lambda c, x: (c * x, c), ops.ones_like(xs[0]), xs, reverse=True)[1],
        [SEQ],
    ),
    "while_loop": (_power_while, [SEQ]),
    "while_loop_max_iterations": (
        lambda x: ops.while_loop(
            lambda y: True, lambda y: ops.sin(y) * 1.5, x, maximum_iterations=3
        ),
        [SEQ],
    ),
    "fori_loop": (lambda x: ops.fori_loop(0, 3, lambda i, y: y * x[i], x[3]), [SEQ]),
    "associative_scan": (lambda x: ops.associative_scan(lambda a, b: a * b, x), [SEQ]),
    "associative_scan_nested": (
        # The linear recurrence h_t = a_t h_{t-1} + b_t as pairs (a, b), composed associatively.
        lambda a, b: ops.associative_scan(
            lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1]), (a, b), axis=1
        )[1],
        [SEQ.T, SEQ.T[::-1]],
    ),
    "map": (lambda x: ops.map(lambda row: ops.sum(row * row), x), [SEQ]),
    "vectorized_map": (
        lambda x, w: ops.vectorized_map(lambda p: ops.matmul(p[0], p[1]), [x, ops.stack([w] * 5)]),
        [SEQ, W],
    ),
    "vectorize": (
        lambda x, w: ops.vectorize(ops.matmul, signature="(n),(n,m)->(m)")(x, w),
        [SEQ, W],
    ),
    "cond": (lambda x: ops.cond(ops.sum(x) > -100.0, lambda: ops.exp(x), lambda: x), [SEQ]),
    "switch": (lambda x: ops.switch(7, [ops.exp, ops.sin], x), [SEQ]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_flow_through_the_loops(name):
    fn, arrays = GRADIENT_CASES[name]
    check_gradients(fn, arrays)
    check_second_order(fn, arrays)
    check_float32(fn, arrays)


def test_values_and_structures_by_hand():
    assert ops.while_loop(lambda i: i < 10, lambda i: i + 1, 0).dtype == np.int32
    x, y = ops.while_loop(lambda x, y: x < 10, lambda x, y: [x + 1, y * 2.0], [0, 1.0])
    assert (int(x), float(y)) == (10, 1024.0)
    ((i, v),) = ops.while_loop(
        lambda p: p[0] < 10, lambda p: ((p[0] + 1, p[1] * 2.0),), ((0, 1.0),), maximum_iterations=3
    )
    assert (int(i), float(v)) == (3, 8.0)
    assert (
        int(ops.while_loop(lambda d: d["a"] < 4, lambda d: {"a": d["a"] + 1}, {"a": 0})["a"]) == 4
    )
    assert int(ops.fori_loop(0, 10, lambda i, s: s + i, 0)) == 45
    carry, ys = ops.scan(lambda c, x: (c + x, c * x), 0.0, np.arange(4.0, dtype="float32"))
    np.testing.assert_array_equal(ys.numpy(), [0.0, 0.0, 2.0, 9.0])
    assert float(carry) == 6.0 and ys.dtype == np.float32
    carry, ys = ops.scan(lambda c, x: (c + 1, None), 0, length=3)
    assert int(carry) == 3 and ys is None
    _, ys = ops.scan(lambda c, x: (c + x, c), 0.0, np.arange(4.0, dtype="float32"), reverse=True)
    np.testing.assert_array_equal(ys.numpy(), [6.0, 5.0, 3.0, 0.0])
    mapped = ops.map(lambda x: {"y1": x * x, "y2": x * 10}, np.arange(4))
    np.testing.assert_array_equal(mapped["y2"].numpy(), [0, 10, 20, 30])
    np.testing.assert_array_equal(
        ops.associative_scan(lambda a, b: a + b, np.arange(5), reverse=True).numpy(),
        [10, 10, 9, 7, 4],
    )
    for n in range(1, 10):  # every length's carries, against cumprod (non-commutative order too)
        np.testing.assert_allclose(
            ops.associative_scan(lambda a, b: a * b, SEQ[:, 0].repeat(2)[:n]).numpy(),
            np.cumprod(SEQ[:, 0].repeat(2)[:n]),
            rtol=1e-6,
        )
    strings = ops.associative_scan(lambda a, b: ops.matmul(a, b), np.stack([W, W.T, W * 2, W]))
    np.testing.assert_allclose(strings.numpy()[-1], W @ W.T @ (W * 2) @ W, rtol=1e-5)
    assert ops.switch(-3, [lambda x: x + 1, lambda x: x - 1], 2.0) == 3.0
    assert ops.switch(np.int32(5), [lambda x: x + 1, lambda x: x - 1], 2.0) == 1.0
    assert ops.cond(np.array(False), lambda: 1.0, lambda: 2.0) == 2.0
    np.testing.assert_array_equal(
        ops.vectorize(lambda a, b: a + b)(np.arange(3), 1.0).numpy(), [1.0, 2.0, 3.0]
    )
    rows = ops.vectorize(ops.sum, signature="(n)->()")(np.ones((2, 4, 3), "float32"))
    assert rows.shape == (2, 4) and rows.dtype == np.float32 and float(rows[0, 0]) == 3.0
    minmax = ops.vectorize(lambda v: (ops.min(v), ops.max(v)), signature="(n)->(),()")(SEQ)
    np.testing.assert_array_equal(minmax[1].numpy(), SEQ.max(axis=1))
    empty = ops.map(lambda x: ops.sum(x, axis=-1, keepdims=True), np.zeros((0, 3), "float32"))
    assert empty.shape == (0, 1) and empty.dtype == np.float32


def test_refusals():
    with pytest.raises(ValueError, match="scan: give xs to scan over"):
        ops.scan(lambda c, x: (c, c), 0)
    with pytest.raises(ValueError, match="scan: unroll must be"):
        ops.scan(lambda c, x: (c, c), 0, length=2, unroll=0)
    with pytest.raises(ValueError, match="scan: every input needs one leading size"):
        ops.scan(lambda c, x: (c, c), 0, [np.ones(2), np.ones(3)])
    with pytest.raises(ValueError, match="while_loop: body must return 2"):
        ops.while_loop(lambda a, b: a < 3, lambda a, b: (a + 1,), (0, 0))
    with pytest.raises(ValueError, match="cond: pred must be a boolean scalar, got shape \\(2,\\)"):
        ops.cond(np.array([True, False]), lambda: 1, lambda: 2)
    with pytest.raises(ValueError, match="switch: branches must be a non-empty list"):
        ops.switch(0, [], 1.0)
    with pytest.raises(ValueError, match="switch: index must be an integer scalar"):
        ops.switch(np.array([0, 1]), [abs], 1.0)
    for index in (1.7, np.float32(1.5), np.array(1.0)):  # (not truncated to a branch)
        with pytest.raises(ValueError, match="switch: index must be an integer scalar"):
            ops.switch(index, [abs, abs], 1.0)
    with pytest.raises(TypeError, match="fori_loop: lower must be an integer"):
        ops.fori_loop(0.5, 3, lambda i, v: v, 0)
    with pytest.raises(
        ValueError, match="associative_scan: every input needs one size along axis 0"
    ):
        ops.associative_scan(lambda a, b: a, [np.ones(2), np.ones(3)])
    with pytest.raises(ValueError, match="vectorize: signature must look like"):
        ops.vectorize(abs, signature="n->m")
    with pytest.raises(ValueError, match="lacks the core axes"):
        ops.vectorize(ops.sum, signature="(n,m)->()")(np.ones(3))


def test_trains_in_fit():
    """A layer whose call scans a recurrence; fit lowers the loss."""

    class Cumulative(mk.layers.Layer):
        def build(self, input_shape):
            self.decay = self.add_weight(shape=(input_shape[-1],), initializer="ones")

        def call(self, x):
            steps = ops.moveaxis(x, 1, 0)  # time first
            last, _ = ops.scan(
                lambda h, xt: (h * self.decay + xt, None), ops.zeros_like(steps[0]), steps
            )
            return last

    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 4, 2)).astype("float32")
    y = (x * 0.5 ** np.arange(3, -1, -1)[None, :, None]).sum(axis=1).astype("float32")
    model = mk.Sequential([mk.Input((4, 2)), Cumulative()])
    model.compile(optimizer=mk.optimizers.Adam(0.05), loss="mse")
    history = model.fit(x, y, epochs=30, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < 0.01 * history.history["loss"][0]
    np.testing.assert_allclose(model.layers[0].decay.numpy(), [0.5, 0.5], atol=0.05)


def test_same_values_as_keras():
    keras = pytest.importorskip("keras")
    cases = [
        lambda o: o.while_loop(lambda x, y: x < 10, lambda x, y: (x + 1, y * 1.5), (0, SEQ[0])),
        lambda o: o.fori_loop(0, 4, lambda i, s: s * o.take(SEQ, i, axis=0), SEQ[4]),
        lambda o: o.scan(lambda c, x: (c * 0.5 + x, o.sin(c)), SEQ[0], SEQ[1:]),
        lambda o: o.scan(lambda c, x: (c * 0.5 + x, c), SEQ[0], SEQ[1:], reverse=True),
        lambda o: o.associative_scan(o.maximum, SEQ, axis=1),
        lambda o: o.associative_scan(lambda a, b: a * b, SEQ, reverse=True),
        lambda o: o.map(lambda x: {"s": o.sum(x), "m": x * 2.0}, SEQ),
        lambda o: o.vectorized_map(lambda x: x[0] * x[1], [SEQ, SEQ * 2.0]),
        lambda o: o.vectorize(lambda a, b: o.matmul(a, b), signature="(n),(n,m)->(m)")(SEQ, W),
        lambda o: o.switch(1, [o.exp, o.sin], SEQ),
        lambda o: o.cond(SEQ[0, 0] > 0, lambda: SEQ * 2.0, lambda: SEQ - 1.0),
    ]
    for number, case in enumerate(cases):
        ours, theirs = mk.tree.flatten(case(ops)), mk.tree.flatten(case(keras.ops))
        assert len(ours) == len(theirs), number
        for a, b in zip(ours, theirs):
            b = keras.ops.convert_to_numpy(b)
            assert np.asarray(a).dtype == b.dtype, number
            np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-6, err_msg=str(number))
