"""Array ops, third group: the windows (bartlett, blackman, hamming, hanning, kaiser), view,
correlate, cdist, fold, unfold, rearrange; values by hand, gradients by finite
differences, and the same values, dtypes and nodes as Keras."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_same_as_keras, assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(7)
IMAGES = RNG.normal(size=(2, 2, 5, 4)).astype("float32")
A = RNG.normal(size=(5,)).astype("float32")
B = RNG.normal(size=(3,)).astype("float32")
P = RNG.normal(size=(2, 4, 3)).astype("float32")
Q = RNG.normal(size=(2, 5, 3)).astype("float32")
BLOCKS = {"kernel_size": (2, 3), "dilation": (2, 1), "padding": 1, "stride": (1, 2)}

DIFFERENTIABLE = {
    "correlate_valid": (lambda a, b: ops.correlate(a, b), [A, B]),
    "correlate_same": (lambda a, b: ops.correlate(a, b, mode="same"), [B, A]),
    "correlate_full": (lambda a, b: ops.correlate(a, b, mode="full"), [A, B]),
    "cdist": (lambda p, q: ops.cdist(p, q), [P, Q]),
    "unfold": (lambda x: ops.unfold(x, **BLOCKS), [IMAGES]),
    "fold": (lambda c: ops.fold(c, (5, 4), **BLOCKS), [ops.unfold(IMAGES, **BLOCKS).numpy()]),
    "rearrange": (lambda x: ops.rearrange(x, "b c (h h1) w -> (b w) h (c h1)", h=5), [IMAGES]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences(name):
    fn, data = DIFFERENTIABLE[name]
    check_gradients(fn, data)
    check_second_order(fn, data)
    check_float32(fn, data)


def test_windows_by_hand():
    np.testing.assert_allclose(ops.bartlett(5).numpy(), [0, 0.5, 1, 0.5, 0])
    np.testing.assert_allclose(ops.hanning(5).numpy(), [0, 0.5, 1, 0.5, 0], atol=1e-7)
    np.testing.assert_allclose(ops.hamming(3).numpy(), [0.08, 1, 0.08], rtol=1e-6)
    n = np.arange(4)
    blackman = 0.42 - 0.5 * np.cos(2 * np.pi * n / 3) + 0.08 * np.cos(4 * np.pi * n / 3)
    np.testing.assert_allclose(ops.blackman(4).numpy(), blackman, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ops.kaiser(4, 0.0).numpy(), np.ones(4))
    for window in (ops.bartlett(7), ops.kaiser(7, 3), ops.hanning(1), ops.hamming(0)):
        assert window.dtype == np.float32
    assert ops.hanning(1).numpy().tolist() == [1.0] and ops.blackman(0).shape == (0,)
    with pytest.raises(ValueError, match="hamming: x must be an int, the window's length"):
        ops.hamming(2.5)


def test_view_reads_the_same_bytes():
    np.testing.assert_array_equal(
        ops.view(np.array([1, 2, 3, 4], "int8"), "int16").numpy(), [1 + 2 * 256, 3 + 4 * 256]
    )
    assert ops.view(np.array([1.0], "float32"), "int32").numpy().tolist() == [0x3F800000]
    assert ops.view(np.ones((2, 2), "float16"), "int32").shape == (2, 1)
    x = mk.Variable([1.0, 2.0])
    with mk.GradientTape() as tape:
        total = ops.sum(ops.view(x) * 3.0)
    assert tape.gradient(total, x).numpy().tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match=r"view: the bytes of int8 values cannot be read as int16"):
        ops.view(np.ones(3, "int8"), "int16")


def test_correlate_cdist_and_blocks_by_hand():
    x, v = np.array([1.0, 2.0, 3.0], "float32"), np.array([0.0, 1.0, 0.5], "float32")
    np.testing.assert_array_equal(ops.correlate(x, v).numpy(), [3.5])
    np.testing.assert_array_equal(ops.correlate(x, v, "full").numpy(), [0.5, 2, 3.5, 3, 0])
    np.testing.assert_array_equal(ops.correlate(x, v[:2], "same").numpy(), [1, 2, 3])
    for n, m, mode in [(2, 5, "same"), (5, 2, "valid"), (4, 6, "valid"), (3, 3, "same")]:
        a, b = RNG.normal(size=n), RNG.normal(size=m)
        np.testing.assert_allclose(ops.correlate(a, b, mode).numpy(), np.correlate(a, b, mode))
    assert ops.correlate(np.array([1, 2, 3], "int8"), np.array([0, 1], "int8")).dtype == "float32"
    distances = ops.cdist(np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[3.0, 4.0]]))
    np.testing.assert_allclose(distances.numpy(), [[5.0], [np.sqrt(13.0)]])
    assert ops.cdist(np.ones((2, 3), "int32"), np.zeros((4, 3), "int32")).dtype == np.float32
    # unfold picks blocks: the first column of a 2x2 kernel with stride 2, by hand.
    image = np.arange(20.0, dtype="float32").reshape(1, 1, 5, 4)
    columns = ops.unfold(image, 2, stride=2)
    assert columns.shape == (1, 4, 4)
    np.testing.assert_array_equal(columns.numpy()[0, :, 0], [0, 1, 4, 5])
    np.testing.assert_array_equal(columns.numpy()[0, :, 3], [10, 11, 14, 15])
    # fold is unfold's adjoint: <unfold(x), y> = <x, fold(y)>.
    y = RNG.normal(size=ops.unfold(IMAGES, **BLOCKS).shape).astype("float32")
    left = np.sum(ops.unfold(IMAGES, **BLOCKS).numpy() * y)
    right = np.sum(IMAGES * ops.fold(y, (5, 4), **BLOCKS).numpy())
    np.testing.assert_allclose(left, right, rtol=1e-5)


def test_rearrange_by_hand():
    x = RNG.normal(size=(4, 6, 8, 3)).astype("float32")
    np.testing.assert_array_equal(
        ops.rearrange(x, "b h w c -> b c h w").numpy(), x.transpose(0, 3, 1, 2)
    )
    np.testing.assert_array_equal(
        ops.rearrange(x, "b h w c -> (b h) w c").numpy(), x.reshape(24, 8, 3)
    )
    patches = ops.rearrange(x, "b (h h1) (w w1) c -> b h w (c h1 w1)", h1=2, w1=2).numpy()
    np.testing.assert_array_equal(patches[1, 2, 3], x[1, 4:6, 6:8].transpose(2, 0, 1).ravel())


REFUSALS = [
    ("correlate", (A, B), {"mode": "other"}, "correlate: mode must be 'valid', 'same' or 'full'"),
    ("correlate", (P, B), {}, "correlate: x1 and x2 must be non-empty and 1-d"),
    ("cdist", (P, Q[..., :2]), {}, r"cdist: x and y must be \(..., rows, d\) with one d"),
    ("unfold", (P, 2), {}, r"unfold: x must be 4-d, \(N, C, H, W\); got shape \(2, 4, 3\)"),
    ("unfold", (IMAGES, 6), {}, r"unfold: a block of \(6, 6\) .* does not fit"),
    ("unfold", (IMAGES, 2), {"stride": 0}, "unfold: stride must be an int or a pair of ints >= 1"),
    ("fold", (P, (5, 4), 2), {}, r"fold: x must be \(N, C \* 4, 12\) for these blocks"),
    ("rearrange", (IMAGES, "b ... w -> b w"), {}, "rearrange: '...' in 'b ... w -> b w' is bey"),
    ("rearrange", (IMAGES, "b c h w -> b c h"), {}, "rearrange: the two sides .*only on one side"),
    ("rearrange", (IMAGES, "b c h w"), {}, "rearrange: the pattern must be 'inputs -> outputs'"),
    ("rearrange", (IMAGES, "b c (h h1) w -> b c h h1 w"), {"h1": 2},
     r"rearrange: cannot split an axis of 5 into \['h', 'h1'\]"),
    ("rearrange", (IMAGES, "b c h w -> b c h w"), {"x": 2}, "lengths given for axes not in"),
    ("rearrange", (P, "b c h w -> b c h w"), {}, r"names 4 axes; got shape \(2, 4, 3\)"),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(REFUSALS)))
def test_bad_input_is_refused_with_the_op_and_shapes(case):
    name, args, kwargs, message = REFUSALS[case]
    with pytest.raises(ValueError, match=message):
        getattr(ops, name)(*args, **kwargs)


AGAINST_KERAS = [
    ("bartlett", (6,), {}), ("blackman", (6,), {}), ("hamming", (7,), {}),
    ("hanning", (7,), {}), ("kaiser", (6, 2.5), {}), ("hanning", (1,), {}),
    ("view", (np.array([1.0, 2.0], "float32"), "int16"), {}),
    ("view", (np.array([1, 2, 3, 4], "int8"), "int16"), {}),
    ("correlate", (A, B), {}), ("correlate", (A, B), {"mode": "full"}),
    ("correlate", (A, B), {"mode": "same"}), ("correlate", (B, A), {"mode": "same"}),
    ("correlate", (np.array([1, 2, 3], "int8"), np.array([0, 1], "int8")), {}),
    ("cdist", (P, Q), {}), ("cdist", (P[0], Q[0]), {}),
    ("unfold", (IMAGES,), BLOCKS), ("unfold", (IMAGES, 2), {}),
    ("fold", (ops.unfold(IMAGES, **BLOCKS).numpy(), (5, 4)), BLOCKS),
    ("rearrange", (IMAGES, "b c (h h1) w -> (b w) h (c h1)"), {"h": 5}),
    ("rearrange", (IMAGES, "b c h w -> b (w h c)"), {}),
]  # fmt: skip


def test_the_same_values_and_dtypes_as_keras():
    assert_same_as_keras(AGAINST_KERAS, atol=2e-6)


def _graph(lib):
    # A fixed batch: Keras 3.15's symbolic rearrange cannot multiply an unknown size.
    x = lib.Input((2, 5, 4), batch_size=4, name="x")
    o = lib.ops
    return lib.Model(
        x,
        [
            o.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
            o.fold(o.unfold(x, 2), (5, 4), 2),
            o.rearrange(x, "b c (h h1) w -> b h (c w h1)", h1=5),
            o.cdist(x[:, 0], x[:, 1]),
            o.view(x, "int32"),
        ],  # fmt: skip
    )


def test_models_of_these_ops_save_and_cross_to_keras(tmp_path):
    assert_saves_and_crosses_to_keras(
        _graph, np.concatenate([IMAGES, IMAGES * 2], axis=0), tmp_path
    )
