"""`MelSpectrogram`: audio signals to mel-scaled (power, by default in decibel) spectrograms.

As Keras's layer: `ops.stft` (frames centred by reflection), the magnitude to
the power `mag_exp`, a product with the HTK mel filter bank (triangles of
peak 1 between `min_freq` and `max_freq`, the DC bin left out), and, with
`power_to_db`, decibels relative to `ref_power`, floored `top_db` below the
largest value of the whole batch (as Keras floors it). No weights.
"""

import numpy as np

from minikeras import ops
from minikeras.layers.layer import Layer

__all__ = ["MelSpectrogram", "linear_to_mel_weight_matrix"]

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(frequencies):
    return _MEL_HIGH_FREQUENCY_Q * np.log(1.0 + frequencies / _MEL_BREAK_FREQUENCY_HERTZ)


def linear_to_mel_weight_matrix(
    num_mel_bins, num_spectrogram_bins, sampling_rate, lower_edge_hertz, upper_edge_hertz
):
    """The HTK mel filter bank: `(num_spectrogram_bins, num_mel_bins)` weights.

    The linear bins cover `[0, sampling_rate / 2]`; `num_mel_bins`
    triangles, evenly spaced on the mel scale `1127 * log(1 + f / 700)`
    between the edges, each peak at 1; the first (DC) bin gets no weight.

    Args:
        num_mel_bins: the mel bands.
        num_spectrogram_bins: the linear bins, `fft_length // 2 + 1`.
        sampling_rate: samples per second.
        lower_edge_hertz: the lowest band's lower edge.
        upper_edge_hertz: the highest band's upper edge.

    Returns:
        A float32 numpy array.

    Example:
        >>> from minikeras.layers.preprocessing.mel_spectrogram import (
        ...     linear_to_mel_weight_matrix,
        ... )
        >>> linear_to_mel_weight_matrix(2, 5, 8000, 0.0, 4000.0).round(3)
        array([[0.   , 0.   ],
               [0.602, 0.398],
               [0.   , 0.873],
               [0.   , 0.377],
               [0.   , 0.   ]], dtype=float32)
    """
    linear = np.linspace(0.0, sampling_rate / 2.0, num_spectrogram_bins)[1:]
    bins_mel = _hertz_to_mel(linear)[:, None]
    edges = np.linspace(
        _hertz_to_mel(lower_edge_hertz), _hertz_to_mel(upper_edge_hertz), num_mel_bins + 2
    )
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    lower_slopes = (bins_mel - lower) / (center - lower)
    upper_slopes = (upper - bins_mel) / (upper - center)
    weights = np.maximum(0.0, np.minimum(lower_slopes, upper_slopes))
    return np.pad(weights, [(1, 0), (0, 0)]).astype(np.float32)


class MelSpectrogram(Layer):
    """Mel spectrograms of audio signals, as Keras's layer (see the module).

    Args:
        fft_length: the FFT's length (the frames' length).
        sequence_stride: the samples between frames.
        sequence_length: the window's length, at most `fft_length`; None is
            `fft_length`.
        window: `"hann"`, `"hamming"` or None (see `ops.stft`).
        sampling_rate: samples per second.
        num_mel_bins: the mel bands.
        min_freq: the lowest band's lower edge, in Hz.
        max_freq: the highest band's upper edge; None is `sampling_rate / 2`
            (as an int, as in Keras).
        power_to_db: give `10 * log10(power / ref_power)`, floored `top_db`
            below the batch's largest value.
        top_db: the floor's distance below the largest value, in dB.
        mag_exp: the power the magnitudes are raised to (2: power, 1: amplitude).
        min_power: the least power taken by the logarithm.
        ref_power: the power of 0 dB.
        **kwargs: `name`, `dtype`.

    Input shape:
        `(batch, samples)` or `(samples,)`, floats.

    Output shape:
        `(batch, num_mel_bins, frames)` (or `(num_mel_bins, frames)`), `frames
        = 1 + samples // sequence_stride`. (Keras's `compute_output_shape`
        says `(samples + sequence_stride + 1) // sequence_stride`, one more
        than its outputs have when `samples % sequence_stride` is
        `sequence_stride - 1`; ours gives what the call gives.)

    Raises:
        ValueError: for a bad argument, or `fft_length < sequence_length`.

    Example:
        >>> layer = mk.layers.MelSpectrogram(fft_length=64, sequence_stride=16, num_mel_bins=8)
        >>> layer(np.random.default_rng(0).normal(size=(2, 160)).astype("float32")).shape
        (2, 8, 11)
    """

    def __init__(
        self,
        fft_length=2048,
        sequence_stride=512,
        sequence_length=None,
        window="hann",
        sampling_rate=16000,
        num_mel_bins=128,
        min_freq=20.0,
        max_freq=None,
        power_to_db=True,
        top_db=80.0,
        mag_exp=2.0,
        min_power=1e-10,
        ref_power=1.0,
        **kwargs,
    ):
        for argument, value in (
            ("fft_length", fft_length),
            ("sequence_stride", sequence_stride),
            ("sequence_length", sequence_length or fft_length),
            ("num_mel_bins", num_mel_bins),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(
                    f"MelSpectrogram: `{argument}` must be a positive int, got {value!r}"
                )
        if fft_length < (sequence_length or fft_length):
            raise ValueError(
                "MelSpectrogram: `fft_length` must be at least `sequence_length`, got "
                f"sequence_length={sequence_length}, fft_length={fft_length}"
            )
        if window not in ("hann", "hamming", None):
            raise ValueError(
                f"MelSpectrogram: `window` must be 'hann', 'hamming' or None, got {window!r}"
            )
        super().__init__(**kwargs)
        self.fft_length = int(fft_length)
        self.sequence_stride = int(sequence_stride)
        self.sequence_length = int(sequence_length or fft_length)
        self.window = window
        self.sampling_rate = sampling_rate
        self.num_mel_bins = int(num_mel_bins)
        self.min_freq = min_freq
        self.max_freq = max_freq or int(sampling_rate / 2)
        self.power_to_db = bool(power_to_db)
        self.top_db = top_db
        self.mag_exp = mag_exp
        self.min_power = min_power
        self.ref_power = ref_power

    def call(self, inputs):
        dtype = self.compute_dtype if self.compute_dtype in ("float32", "float64") else "float32"
        inputs = ops.cast(inputs, dtype)
        real, imag = ops.stft(
            inputs,
            self.sequence_length,
            self.sequence_stride,
            self.fft_length,
            window=self.window,
            center=True,
        )
        spectrum = ops.power(ops.sqrt(ops.square(real) + ops.square(imag)), self.mag_exp)
        weights = linear_to_mel_weight_matrix(
            self.num_mel_bins,
            spectrum.shape[-1],
            self.sampling_rate,
            self.min_freq,
            self.max_freq,
        )
        outputs = ops.tensordot(spectrum, weights.astype(dtype), axes=1)
        if self.power_to_db:
            outputs = 10.0 * ops.log10(ops.maximum(outputs, self.min_power))
            outputs = outputs - 10.0 * np.log10(max(abs(self.ref_power), self.min_power))
            if outputs.size:  # (an empty batch has no largest value)
                outputs = ops.maximum(outputs, ops.max(outputs) - self.top_db)
        return ops.cast(ops.swapaxes(outputs, -1, -2), self.compute_dtype)

    def compute_output_shape(self, input_shape):
        samples = input_shape[-1]
        frames = None if samples is None else 1 + samples // self.sequence_stride
        return (*input_shape[:-1], self.num_mel_bins, frames)

    def get_config(self):
        return {
            **super().get_config(),
            "fft_length": self.fft_length,
            "sequence_stride": self.sequence_stride,
            "sequence_length": self.sequence_length,
            "window": self.window,
            "sampling_rate": self.sampling_rate,
            "num_mel_bins": self.num_mel_bins,
            "min_freq": self.min_freq,
            "max_freq": self.max_freq,
            "power_to_db": self.power_to_db,
            "top_db": self.top_db,
            "mag_exp": self.mag_exp,
            "min_power": self.min_power,
            "ref_power": self.ref_power,
        }
