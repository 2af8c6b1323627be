"""`STFT`: the kernels of a short-time Fourier transform written as a convolution.

Frame sample `t` and frequency bin `k` of an FFT of length `n` give the
real kernel `cos(-2 pi t k / n)` and the imaginary kernel `sin(-2 pi t k /
n)`, times a window and divided by its scale. `STFTSpectrogram` convolves
its inputs with the two. Keras computes the windows with
`scipy.signal.get_window`; minikeras has no scipy, so the windows are written
out here (`window_values`): Hann, Hamming, Blackman, Bartlett and boxcar,
symmetric or periodic, the values scipy gives.
"""

import numpy as np

from minikeras.config import standardize_dtype
from minikeras.initializers.initializer import Initializer, _check_shape

__all__ = ["STFT", "window_values"]

# name -> the symmetric window of length m >= 2 at steps n = 0 .. m - 1.
_WINDOWS = {
    "hann": lambda n, m: 0.5 - 0.5 * np.cos(2.0 * np.pi * n / (m - 1)),
    "hamming": lambda n, m: 0.54 - 0.46 * np.cos(2.0 * np.pi * n / (m - 1)),
    "blackman": lambda n, m: (
        0.42 - 0.5 * np.cos(2.0 * np.pi * n / (m - 1)) + 0.08 * np.cos(4.0 * np.pi * n / (m - 1))
    ),
    "bartlett": lambda n, m: 1.0 - np.abs(2.0 * n / (m - 1) - 1.0),
    "boxcar": lambda n, m: np.ones(len(n)),
}


def _check_window_name(owner, window):
    if isinstance(window, str) and window not in _WINDOWS:
        raise ValueError(
            f"{owner}: window must be one of {', '.join(map(repr, _WINDOWS))}, an array or "
            f"None, got {window!r}"
        )


def window_values(window, length, periodic=False):
    """A named window's `length` values, as `scipy.signal.get_window(window, length, periodic)`.

    Args:
        window: `"hann"`, `"hamming"`, `"blackman"`, `"bartlett"` or `"boxcar"`.
        length: the number of values.
        periodic: a periodic window (for spectral analysis: the symmetric
            window one longer, its last value dropped) instead of a symmetric one.

    Returns:
        A float64 numpy array `(length,)`.

    Raises:
        ValueError: for another name.

    Example:
        >>> mk.initializers.stft_kernels.window_values("hann", 5)
        array([0. , 0.5, 1. , 0.5, 0. ])
    """
    _check_window_name("window_values", window)
    if length == 1:  # (one value: 1, periodic or not, as scipy)
        return np.ones(1)
    size = length + 1 if periodic else length
    return _WINDOWS[window](np.arange(size, dtype=np.float64), size)[:length]


class STFT(Initializer):
    """The real or imaginary kernel of a short-time Fourier transform, windowed.

    For a shape `(frame_length, 1, bins)` (`bins = fft_length // 2 + 1`),
    entry `(t, 0, k)` is `cos(-2 pi t k / fft_length)` (`side="real"`) or
    its `sin` (`side="imag"`), times `window[t] / scale`. Computed in the
    requested dtype, as Keras computes it.

    Args:
        side: `"real"` or `"imag"`.
        window: a window name (`"hann"`, `"hamming"`, `"blackman"`,
            `"bartlett"`, `"boxcar"`; Keras takes any of scipy's), an array
            of `frame_length` values, or None (no window).
        scaling: `"density"` (divide by the window's L2 norm), `"spectrum"`
            (its L1 norm) or None.
        periodic: use the periodic form of a named window.

    Raises:
        ValueError: for a bad `side`, `window` or `scaling`, and at call time
            for a shape that is not `(frame_length, channels, bins)` or a
            window of another length.

    Example:
        >>> kernel = mk.initializers.STFT("real", window=None, scaling=None)((4, 1, 3))
        >>> kernel[:, 0, :].round(6)
        array([[ 1.,  1.,  1.],
               [ 1.,  0., -1.],
               [ 1., -1.,  1.],
               [ 1., -0., -1.]], dtype=float32)
    """

    def __init__(self, side="real", window="hann", scaling="density", periodic=False):
        if side not in ("real", "imag"):
            raise ValueError(f"STFT: side must be 'real' or 'imag', got {side!r}")
        _check_window_name("STFT", window)
        if scaling not in (None, "density", "spectrum"):
            raise ValueError(
                f"STFT: scaling must be None, 'density' or 'spectrum', got {scaling!r}"
            )
        self.side = side
        self.window = window
        self.scaling = scaling
        self.periodic = bool(periodic)

    def __call__(self, shape, dtype=None):
        shape = _check_shape("STFT", shape)
        dtype = np.dtype(standardize_dtype(dtype))
        if len(shape) != 3:
            raise ValueError(f"STFT: expected a shape (frame_length, channels, bins), got {shape}")
        frame_length, _, bins = shape
        # Keras's float arithmetic, in the dtype: -2 * t * (k / n) * pi.
        freq = np.arange(bins, dtype=dtype).reshape(1, 1, bins) / dtype.type((bins - 1) * 2)
        time = np.arange(frame_length, dtype=dtype).reshape(frame_length, 1, 1)
        angles = (dtype.type(-2) * time) * freq * dtype.type(np.pi)
        kernel = np.cos(angles) if self.side == "real" else np.sin(angles)
        if self.window is None:
            return np.broadcast_to(kernel, shape).astype(dtype)
        if isinstance(self.window, str):
            window = window_values(self.window, frame_length, self.periodic).astype(dtype)
        else:
            window = np.asarray(self.window, dtype=dtype)
        if window.shape != (frame_length,):
            raise ValueError(
                f"STFT: the window must have shape ({frame_length},), got {window.shape}"
            )
        window = window.reshape(frame_length, 1, 1)
        scale = dtype.type(1)
        if self.scaling == "density":
            scale = np.sqrt(np.sum(np.square(window)))
        elif self.scaling == "spectrum":
            scale = np.sum(np.abs(window))
        return np.broadcast_to(kernel * window / scale, shape).astype(dtype)

    def get_config(self):
        window = self.window
        if window is not None and not isinstance(window, str):
            window = np.asarray(window).tolist()
        return {
            "side": self.side,
            "window": window,
            "periodic": self.periodic,
            "scaling": self.scaling,
        }
