"""Fourier ops: fft, fft2, ifft2, rfft, irfft, stft, istft on (real, imag) pairs, and the
complex views view_as_complex, view_as_real, polar, as Keras's.
Values against numpy.fft, gradients against finite differences (second order and
float32 too), values and dtypes against Keras, graph nodes saved both ways."""

import numpy as np
import pytest
from finite_differences import check_float32, check_gradients, check_second_order
from op_graphs import assert_saves_and_crosses_to_keras

import minikeras as mk
from minikeras import ops

RNG = np.random.default_rng(5)
REAL = RNG.normal(size=(2, 4, 6)).astype("float32")
IMAG = RNG.normal(size=(2, 4, 6)).astype("float32")
ODD = RNG.normal(size=(3, 5)).astype("float32")
SIGNAL = RNG.normal(size=(2, 37)).astype("float32")
STFT_CASES = [
    {"sequence_length": 8, "sequence_stride": 3, "fft_length": 10},
    {
        "sequence_length": 6,
        "sequence_stride": 2,
        "fft_length": 6,
        "window": "hamming",
        "center": False,
    },
    {"sequence_length": 5, "sequence_stride": 5, "fft_length": 8, "window": None},
]
SPECTRA = [ops.stft(SIGNAL, **case) for case in STFT_CASES]


def _joined(pair):
    return ops.concatenate(list(pair), axis=-1)


GRADIENT_CASES = {
    "fft": (lambda a, b: _joined(ops.fft((a, b))), [REAL, IMAG]),
    "fft2": (lambda a, b: _joined(ops.fft2((a, b))), [REAL, IMAG]),
    "ifft2": (lambda a, b: _joined(ops.ifft2((a, b))), [REAL, IMAG]),
    "rfft_even": (lambda a: _joined(ops.rfft(a)), [REAL]),
    "rfft_odd": (lambda a: _joined(ops.rfft(a)), [ODD]),
    "rfft_padded": (lambda a: _joined(ops.rfft(a, fft_length=9)), [REAL]),
    "rfft_cut": (lambda a: _joined(ops.rfft(a, fft_length=3)), [REAL]),
    "irfft": (lambda a, b: ops.irfft((a, b)), [REAL, IMAG]),
    "irfft_odd": (lambda a, b: ops.irfft((a, b), fft_length=7), [ODD, ODD[::-1]]),
    "irfft_cut": (lambda a, b: ops.irfft((a, b), fft_length=4), [REAL, IMAG]),
    "irfft_padded": (lambda a, b: ops.irfft((a, b), fft_length=14), [REAL, IMAG]),
    **{
        f"stft_{number}": (lambda x, case=case: _joined(ops.stft(x, **case)), [SIGNAL])
        for number, case in enumerate(STFT_CASES)
    },
    **{
        f"istft_{number}": (
            lambda a, b, case=case: ops.istft((a, b), **case),
            [part.numpy() for part in spectrum],
        )
        for number, (case, spectrum) in enumerate(zip(STFT_CASES, SPECTRA))
    },
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(name):
    fn, arrays = GRADIENT_CASES[name]
    check_gradients(fn, arrays)
    check_second_order(fn, arrays)
    check_float32(fn, arrays)


def test_values_against_numpy():
    z = REAL + 1j * IMAG
    for op, reference in [
        (ops.fft, np.fft.fft),
        (ops.fft2, np.fft.fft2),
        (ops.ifft2, np.fft.ifft2),
    ]:
        real, imag = op((REAL, IMAG))
        assert real.dtype == imag.dtype == np.float32
        np.testing.assert_allclose(
            real.numpy() + 1j * imag.numpy(), reference(z), rtol=1e-4, atol=1e-5
        )
    for length in (None, 3, 9):
        real, imag = ops.rfft(ODD, fft_length=length)
        np.testing.assert_allclose(
            real.numpy() + 1j * imag.numpy(), np.fft.rfft(ODD, n=length), atol=1e-5
        )
        back = ops.irfft((real, imag), fft_length=length or 5)
        np.testing.assert_allclose(
            back.numpy(), np.fft.irfft(np.fft.rfft(ODD, n=length), n=length or 5), atol=1e-5
        )
    assert ops.rfft(np.arange(4)).__getitem__(0).dtype == np.float32


def test_complex_views_by_hand():
    z = ops.view_as_complex([[1.0, 2.0], [3.0, -1.0]])
    assert z.dtype == np.complex64
    np.testing.assert_array_equal(z.numpy(), [1 + 2j, 3 - 1j])
    np.testing.assert_array_equal(ops.view_as_real(z).numpy(), [[1.0, 2.0], [3.0, -1.0]])
    np.testing.assert_array_equal(ops.view_as_real(np.ones(2, "float32")).numpy(), [[1, 0], [1, 0]])
    w = ops.polar(np.array([1, 2]), np.array([0.0, np.pi / 2], "float32"))
    assert w.dtype == np.complex64
    np.testing.assert_allclose(w.numpy(), [1.0, 2j], atol=1e-6)
    with pytest.raises(ValueError, match="view_as_complex: the last axis must be of size 2"):
        ops.view_as_complex(np.ones((2, 3), "float32"))


def test_gradients_through_complex_tensors_by_hand():
    # Complex results are complex64 (Keras's), so the float64 finite differences do not
    # apply; the gradients are checked against their formulas, and for float64 leaks.
    r, a = mk.Variable(np.abs(REAL[0]) + 0.1), mk.Variable(IMAG[0])
    x, y = mk.Variable(REAL[0, :, :2]), mk.Variable(IMAG[0, :, :2])
    weights = RNG.normal(size=(4, 6, 2)).astype("float32")
    with mk.GradientTape(persistent=True) as tape:
        polar_sum = ops.sum(ops.view_as_real(ops.polar(r, a)) * weights)
        product = ops.view_as_real(ops.view_as_complex(x) * ops.view_as_complex(y))
        product_sum = ops.sum(product * weights[:, 0])
    w_re, w_im = weights[..., 0], weights[..., 1]
    rv, av = r.numpy(), a.numpy()
    np.testing.assert_allclose(
        tape.gradient(polar_sum, r).numpy(), w_re * np.cos(av) + w_im * np.sin(av), rtol=1e-5
    )
    np.testing.assert_allclose(
        tape.gradient(polar_sum, a).numpy(),
        -w_re * rv * np.sin(av) + w_im * rv * np.cos(av),
        rtol=1e-4,
        atol=1e-6,
    )
    # (x0 + i x1)(y0 + i y1) = (x0 y0 - x1 y1) + i (x0 y1 + x1 y0)
    u, v = weights[:, 0, 0], weights[:, 0, 1]
    y0, y1 = y.numpy()[..., 0], y.numpy()[..., 1]
    expected = np.stack([u * y0 + v * y1, -u * y1 + v * y0], axis=-1)
    grad = tape.gradient(product_sum, x)
    assert grad.dtype == np.float32
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-6)
    check_float32(lambda r, a: ops.view_as_real(ops.polar(r, a)), [np.abs(REAL), IMAG])


def test_stft_by_hand_and_istft_inverts_it():
    real, imag = ops.stft(SIGNAL, 8, 3, 10, center=False)
    window = np.zeros(10)
    window[1:9] = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(8) / 8)  # periodic Hann, centred
    frames = np.stack([SIGNAL[:, i * 3 : i * 3 + 10] for i in range(10)], axis=1) * window
    np.testing.assert_allclose(real.numpy() + 1j * imag.numpy(), np.fft.rfft(frames), atol=1e-5)
    assert real.dtype == np.float32 and real.shape == (2, 10, 6)
    for case, spectrum in zip(STFT_CASES[:2], SPECTRA[:2]):  # windows that cover every sample
        back = ops.istft(spectrum, **case)
        np.testing.assert_allclose(back.numpy(), SIGNAL[:, : back.shape[-1]], atol=1e-5)
    assert ops.istft(SPECTRA[0], 8, 3, 10, length=37).shape == (2, 37)


def test_refusals():
    with pytest.raises(TypeError, match="stft: x must be float32 or float64, got dtype int64"):
        ops.stft(np.arange(20), 4, 2, 4)
    with pytest.raises(ValueError, match="stft: fft_length must be at least sequence_length"):
        ops.stft(SIGNAL, 8, 2, 4)
    with pytest.raises(ValueError, match="istft: window must be 'hann', 'hamming'"):
        ops.istft(SPECTRA[0], 8, 3, 10, window="boxcar")
    with pytest.raises(ValueError, match="stft: window must have shape \\(8,\\)"):
        ops.stft(SIGNAL, 8, 3, 10, window=np.ones(3, "float32"))
    with pytest.raises(ValueError, match="fft: x must be a pair"):
        ops.fft(REAL)
    with pytest.raises(ValueError, match="one shape, got \\(2, 4, 6\\) and \\(4, 6\\)"):
        ops.fft((REAL, IMAG[0]))
    with pytest.raises(ValueError, match="fft2: both parts must be floating"):
        ops.fft2((np.ones((2, 2), "int32"), np.ones((2, 2), "int32")))
    with pytest.raises(ValueError, match="rfft: fft_length must be a positive int"):
        ops.rfft(REAL, fft_length=0)
    with pytest.raises(ValueError, match="ifft2: expected at least 2 axes"):
        ops.ifft2((REAL[0, 0], IMAG[0, 0]))


def _graph(k):
    real, imag = k.Input((4, 6)), k.Input((4, 6))
    outputs = [
        *k.ops.fft((real, imag)),
        *k.ops.fft2((real, imag)),
        *k.ops.ifft2((real, imag)),
        *k.ops.rfft(real, fft_length=8),
        k.ops.irfft((real, imag), fft_length=9),
        *k.ops.stft(real, 3, 2, 4, window="hamming"),
        k.ops.istft((real[:, :, :3], imag[:, :, :3]), 4, 1, 4, length=5),
    ]
    return k.Model([real, imag], outputs)


def test_nodes_save_both_ways_and_cross_to_keras(tmp_path):
    model = _graph(mk)
    assert {"FFT", "FFT2", "IFFT2", "RFFT", "IRFFT", "STFT", "ISTFT"} <= {
        type(op).__name__ for op in model.operations
    }
    data = [REAL, IMAG]
    assert_saves_and_crosses_to_keras(_graph, data, tmp_path, rtol=1e-4, atol=1e-4)


def test_same_as_keras():
    keras = pytest.importorskip("keras")
    theirs = _graph(keras)
    for got, want in zip(_graph(mk)([REAL, IMAG]), theirs([REAL, IMAG])):
        want = keras.ops.convert_to_numpy(want)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
    z = np.array([1 + 2j, 3 - 1j], "complex64")
    for got, want in [
        (ops.view_as_real(z), keras.ops.view_as_real(z)),
        (ops.view_as_complex(REAL[..., :2]), keras.ops.view_as_complex(REAL[..., :2])),
        (ops.polar(REAL, IMAG), keras.ops.polar(REAL, IMAG)),
    ]:
        assert got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-5, atol=1e-6)
    for case in STFT_CASES:
        ours_pair = ops.stft(SIGNAL, **case)
        their_pair = keras.ops.stft(SIGNAL, **case)
        for got, want in zip(
            [*ours_pair, ops.istft(ours_pair, **case)],
            [*their_pair, keras.ops.istft(their_pair, **case)],
        ):
            np.testing.assert_allclose(got.numpy(), np.asarray(want), rtol=1e-4, atol=1e-5)
