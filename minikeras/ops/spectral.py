"""Short-time Fourier transforms: stft and istft, as Keras's ops; and the framing they use.

`stft` cuts the signal into overlapping frames, windows them and takes each
frame's `rfft`; `istft` takes each frame's `irfft`, windows the frames again and
overlaps and adds them, divided by the sum of the squared windows. Cutting
frames and adding them back are `ops.scatter`'s gather and scatter-add, each
the other's gradient, so both transforms have gradients of every order. The
scaling follows Keras's (scipy's "spectrum" scaling, undone), so
`istft(stft(x))` gives `x` back. `extract_sequences` is the framing alone.
"""

import numpy as np

from minikeras.ops.axes import moveaxis
from minikeras.ops.core import array_of, getval, shape_of, wrap
from minikeras.ops.fourier import _complex, _irfft, _pair, _rfft
from minikeras.ops.operands import narrowed_operands
from minikeras.ops.scatter import _gather, _scatter_add
from minikeras.ops.shape import concatenate

__all__ = ["extract_sequences", "istft", "stft"]


def _frame_index(count, size, stride):
    """Positions `i * stride + j` of frame `i`'s `j`th value, as `_gather` takes them."""
    return (np.arange(count)[:, None] * stride + np.arange(size))[..., None]


def _frames(signal, size, stride):
    """The frames `signal[..., i * stride : i * stride + size]`, on a new second-last axis."""
    count = (shape_of(signal)[-1] - size) // stride + 1
    samples_first = moveaxis(wrap(signal), -1, 0)._value
    frames = _gather(samples_first, _frame_index(count, size, stride))  # (count, size, ...)
    return moveaxis(moveaxis(wrap(frames), 0, -1), 0, -1)._value


def extract_sequences(x, sequence_length, sequence_stride):
    """Frames of the last axis: windows of `sequence_length` values, `sequence_stride` apart.

    The last axis, of length N, becomes two: `1 + (N - sequence_length) //
    sequence_stride` frames (none if N < sequence_length, as Keras on JAX
    gives), each of `sequence_length` values. The dtype is kept; the gradient
    adds each frame's back where it came from.

    Args:
        x: Tensor of rank >= 1.
        sequence_length: a positive int, the frame length.
        sequence_stride: a positive int, the hop between frames.

    Returns:
        A Tensor of shape `(..., num_sequences, sequence_length)`.

    Raises:
        ValueError: for a scalar `x` or a length or stride that is not a positive int.

    Example:
        >>> mk.ops.extract_sequences(np.array([1, 2, 3, 4, 5, 6], "int32"), 3, 2).numpy()
        array([[1, 2, 3],
               [3, 4, 5]], dtype=int32)
    """
    value = array_of(x)
    lengths = {"sequence_length": sequence_length, "sequence_stride": sequence_stride}
    for name, number in lengths.items():
        if isinstance(number, bool) or not isinstance(number, (int, np.integer)) or number < 1:
            raise ValueError(f"extract_sequences: {name} must be a positive int, got {number!r}")
    if not shape_of(value):
        raise ValueError("extract_sequences: x must have rank >= 1, got a scalar")
    if shape_of(value)[-1] < sequence_length:
        empty = np.zeros((*shape_of(value)[:-1], 0, sequence_length), getval(value).dtype)
        return wrap(empty)
    return wrap(_frames(value, int(sequence_length), int(sequence_stride)))


def _overlap_add(frames, stride):
    """The frames summed where they overlap, frame `i` at `i * stride` (`_frames`'s adjoint)."""
    count, size = shape_of(frames)[-2:]
    length = size + stride * (count - 1)
    frames_first = moveaxis(wrap(frames), (-2, -1), (0, 1))._value
    shape = (length,) + shape_of(frames)[:-2]
    signal = _scatter_add(frames_first, _frame_index(count, size, stride), shape)
    return moveaxis(wrap(signal), 0, -1)._value


def _window(op, window, sequence_length, fft_length, dtype):
    """The window, centred in `fft_length` with zeros (ones if None); numpy array or box."""
    if window is None:
        return np.ones(fft_length, dtype=dtype)
    if isinstance(window, str):
        if window not in ("hann", "hamming"):
            raise ValueError(
                f"{op}: window must be 'hann', 'hamming', a tensor or None, got {window!r}"
            )
        # Periodic, as scipy's (ops.hanning and ops.hamming are numpy's symmetric ones, in
        # float32): computed in float64, then given x's dtype.
        phase = 2.0 * np.pi * np.arange(sequence_length) / sequence_length
        a = 0.5 if window == "hann" else 0.54
        values = (a - (1.0 - a) * np.cos(phase)).astype(dtype)
    else:
        values = array_of(window)
        if shape_of(values) != (sequence_length,):
            raise ValueError(
                f"{op}: window must have shape ({sequence_length},), got {shape_of(values)}"
            )
        if getval(values).dtype != dtype:  # (a window of another dtype: taken as a constant)
            values = np.asarray(getval(values), dtype)
    left = (fft_length - sequence_length) // 2
    right = fft_length - sequence_length - left
    return concatenate([np.zeros(left, dtype), values, np.zeros(right, dtype)])._value


def _check_lengths(op, sequence_length, sequence_stride, fft_length):
    for name, value in (
        ("sequence_length", sequence_length),
        ("sequence_stride", sequence_stride),
        ("fft_length", fft_length),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{op}: {name} must be a positive int, got {value!r}")
    if fft_length < sequence_length:
        raise ValueError(
            f"{op}: fft_length must be at least sequence_length, got fft_length={fft_length} "
            f"and sequence_length={sequence_length}"
        )


def stft(x, sequence_length, sequence_stride, fft_length, window="hann", center=True):
    """The short-time Fourier transform of a real signal along its last axis.

    Frames of `fft_length` values start every `sequence_stride`; each is
    multiplied by the window (`sequence_length` long, centred with zeros)
    and transformed by `rfft`.

    Args:
        x: float32 or float64 Tensor of shape `(..., samples)`.
        sequence_length: the window's length.
        sequence_stride: the step between frames.
        fft_length: the frames' length (at least `sequence_length`).
        window: `"hann"` (default), `"hamming"` (periodic, as scipy's), a
            Tensor of shape `(sequence_length,)`, or None (no window).
        center: pad `fft_length // 2` values at both ends by reflection, so
            that frame `t` is centred at `t * sequence_stride`.

    Returns:
        The pair `(real, imag)`, each of shape
        `(..., frames, fft_length // 2 + 1)`.

    Raises:
        TypeError: if `x` is not float32 or float64.
        ValueError: for lengths that are not positive ints, `fft_length <
            sequence_length`, an unknown window or one of the wrong shape.

    Example:
        >>> real, imag = mk.ops.stft(np.ones(8, "float32"), 4, 2, 4, window=None, center=False)
        >>> real.numpy()
        array([[4., 0., 0.],
               [4., 0., 0.],
               [4., 0., 0.]], dtype=float32)
    """
    # (a numpy float64 x beside a Tensor window takes its precision: ops.operands)
    x, window = narrowed_operands(x, window)
    value = array_of(x)
    dtype = getval(value).dtype
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"stft: x must be float32 or float64, got dtype {dtype}")
    _check_lengths("stft", sequence_length, sequence_stride, fft_length)
    win = _window("stft", window, sequence_length, fft_length, dtype)
    if center:
        half = fft_length // 2
        reflected = np.pad(np.arange(shape_of(value)[-1]), half, mode="reflect")
        value = value[..., reflected]
    if shape_of(value)[-1] < fft_length:
        raise ValueError(
            f"stft: x needs at least {fft_length} samples (after padding), got shape "
            f"{shape_of(value)}"
        )
    frames = _frames(value, fft_length, sequence_stride) * win
    return _pair(_rfft(frames, fft_length))


def istft(x, sequence_length, sequence_stride, fft_length, length=None, window="hann", center=True):
    """The inverse short-time Fourier transform: a signal from `stft`'s frames.

    Each frame's `irfft`, windowed again, is overlapped and added, and the
    sum divided by that of the squared windows (where it is not ~0), as
    scipy's and Keras's; with `window=None`, Keras's scaling for it.

    Args:
        x: a pair `(real, imag)` of floating tensors of shape
            `(..., frames, fft_length // 2 + 1)`.
        sequence_length: the window's length.
        sequence_stride: the step between frames.
        fft_length: the frames' length.
        length: the output's length; default all the frames cover (less the
            centring padding).
        window: as for `stft`.
        center: whether `stft` padded the signal (then cut off here).

    Returns:
        A real Tensor of shape `(..., length)`.

    Raises:
        ValueError: if `x` is not such a pair, has fewer than two axes, or for
            lengths or windows `stft` refuses.

    Example:
        >>> signal = np.sin(np.arange(16, dtype="float32"))
        >>> spectrum = mk.ops.stft(signal, 8, 2, 8)
        >>> back = mk.ops.istft(spectrum, 8, 2, 8, length=16)
        >>> bool(np.allclose(back.numpy(), signal, atol=1e-5))
        True
    """
    if isinstance(x, (tuple, list)) and len(x) == 2:
        # (numpy float64 parts beside a Tensor window take its precision: ops.operands)
        real, imag, window = narrowed_operands(x[0], x[1], window)
        x = (real, imag)
    value = _complex("istft", x)
    if len(shape_of(value)) < 2:
        raise ValueError(f"istft: x needs at least 2 axes (frames, bins), got {shape_of(value)}")
    _check_lengths("istft", sequence_length, sequence_stride, fft_length)
    dtype = np.real(np.zeros(1, getval(value).dtype)).dtype
    win = _window("istft", window, sequence_length, fft_length, dtype)
    frames = _irfft(value, fft_length) * win
    plain_win = getval(win)
    count = shape_of(value)[-2]
    norm = _overlap_add(
        np.broadcast_to(plain_win * plain_win, (count, fft_length)), sequence_stride
    )
    signal = _overlap_add(frames, sequence_stride) / np.where(norm > 1e-10, norm, 1.0).astype(dtype)
    if window is None:  # Keras's scaling without a window
        signal = signal * (float(fft_length) / sequence_stride)
    total = fft_length + sequence_stride * (count - 1)
    start = fft_length // 2 if center else 0
    if length is not None:
        end = start + int(length)
    else:
        end = total - fft_length // 2 if center else total
    return wrap(signal[..., start:end])
