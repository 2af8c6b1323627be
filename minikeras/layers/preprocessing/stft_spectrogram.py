"""`STFTSpectrogram`: a short-time Fourier transform as a strided convolution, Keras's layer.

The signal's frames are convolved with two kernels from `initializers.STFT`
(`real_kernel`, `imag_kernel`: cosines and sines times a window), which are
weights, trainable as in Keras. Each channel of the inputs is transformed
alone; the outputs are the real or imaginary parts, their angle, both, the
power spectral density, the magnitude or its log.
"""

import math
import warnings

import numpy as np

from minikeras import config, initializers, ops
from minikeras.initializers.stft_kernels import _check_window_name
from minikeras.layers.data_format import check_layer_data_format
from minikeras.layers.layer import Layer
from minikeras.ops.windows import normalize_padding, output_length

__all__ = ["STFTSpectrogram"]

MODES = ("log", "magnitude", "psd", "real", "imag", "angle", "stft")


class STFTSpectrogram(Layer):
    """Spectrograms of 1-D signals, channel by channel, by convolving with STFT kernels.

    Frames of `frame_length` samples every `frame_step` are windowed and
    transformed into `fft_length // 2 + 1` frequency bins. The two kernels
    are weights (`real_kernel`, `imag_kernel`, each `(frame_length, 1, bins)`),
    initialized by `initializers.STFT` and trainable, as in Keras.

    Args:
        mode: what each bin gives: `"log"` (default: the log of the
            magnitude), `"magnitude"` (`sqrt(real**2 + imag**2)`), `"psd"` (the
            power, interior bins doubled), `"real"`, `"imag"`, `"angle"` or
            `"stft"` (the real bins then the imaginary ones).
        frame_length: the samples in a frame (the window's length).
        frame_step: the samples between frames; None is `frame_length // 2`.
        fft_length: the FFT's length, at least `frame_length`; None is the
            next power of two.
        window: a window name (see `initializers.STFT`), an array of
            `frame_length` values, or None.
        periodic: use the periodic form of a named window.
        scaling: `"density"`, `"spectrum"` or None (see `initializers.STFT`).
        padding: `"valid"` or `"same"`, of the framing convolution.
        expand_dims: keep channels and frequencies apart: `(batch, frames, bins,
            channels)` instead of `(batch, frames, channels * bins)`.
        data_format: `"channels_last"` or `"channels_first"`; None means
            `mk.config.image_data_format()` when the layer is made.
        **kwargs: `name`, `dtype`, `trainable`.

    Input shape:
        `(batch, samples, channels)` (`(batch, channels, samples)` with
        `data_format="channels_first"`), floats.

    Output shape:
        `(batch, frames, channels * bins)`, or with `expand_dims`
        `(batch, frames, bins, channels)`; channels first: `(batch, channels *
        bins, frames)`, or `(batch, channels, frames, bins)`. `bins` is
        `fft_length // 2 + 1` (twice that for `"stft"`), `frames` as a
        convolution with that stride and padding gives it.

    Raises:
        ValueError: for a bad argument.
        TypeError: when called on inputs that are not floats.

    Example:
        >>> layer = mk.layers.STFTSpectrogram(frame_length=8, frame_step=4, mode="magnitude")
        >>> layer(np.ones((2, 32, 1), "float32")).shape
        (2, 7, 5)
    """

    def __init__(
        self,
        mode="log",
        frame_length=256,
        frame_step=None,
        fft_length=None,
        window="hann",
        periodic=False,
        scaling="density",
        padding="valid",
        expand_dims=False,
        data_format=None,
        **kwargs,
    ):
        name = "STFTSpectrogram"
        for argument, value in (("frame_length", frame_length), ("frame_step", frame_step)):
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1
            ):
                raise ValueError(f"{name}: `{argument}` must be a positive int, got {value!r}")
        if frame_step is not None and frame_step > frame_length:
            raise ValueError(
                f"{name}: `frame_step` must be a positive int not above `frame_length`, got "
                f"frame_step={frame_step}, frame_length={frame_length}"
            )
        if fft_length is not None and fft_length < frame_length:
            raise ValueError(
                f"{name}: `fft_length` must be at least `frame_length`, got "
                f"fft_length={fft_length}, frame_length={frame_length}"
            )
        if fft_length is not None and fft_length & -fft_length != fft_length:
            warnings.warn(
                f"{name}: `fft_length` is best a power of two, got {fft_length}", stacklevel=2
            )
        if mode not in MODES:
            raise ValueError(f"{name}: `mode` must be one of {', '.join(MODES)}, got {mode!r}")
        if scaling not in (None, "density", "spectrum"):
            raise ValueError(
                f"{name}: `scaling` must be None, 'density' or 'spectrum', got {scaling!r}"
            )
        _check_window_name(name, window)
        super().__init__(**kwargs)
        self.mode = mode
        self.frame_length = int(frame_length)
        self.frame_step = frame_step
        self._frame_step = int(frame_step or self.frame_length // 2)
        self.fft_length = fft_length
        self._fft_length = int(fft_length or 2 ** math.ceil(math.log2(frame_length)))
        self.window = window if window is None or isinstance(window, str) else list(window)
        self.periodic = bool(periodic)
        self.scaling = scaling
        self.padding = normalize_padding(name, padding)
        self.expand_dims = bool(expand_dims)
        self.data_format = check_layer_data_format(name, data_format)

    def build(self, input_shape):
        self._check_rank(input_shape)
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        for side in ("real", "imag"):
            if self.mode != ("imag" if side == "real" else "real"):
                kernel = self.add_weight(
                    f"{side}_kernel",
                    shape=shape,
                    initializer=initializers.STFT(side, self.window, self.scaling, self.periodic),
                )
                setattr(self, f"{side}_kernel", kernel)

    def _check_rank(self, shape):
        if len(shape) != 3:
            raise ValueError(
                f"STFTSpectrogram '{self.name}' expects inputs of rank 3 (batch, samples, "
                f"channels), got shape {tuple(shape)}"
            )

    def call(self, inputs):
        self._check_rank(inputs.shape)
        if inputs.dtype.kind != "f":
            raise TypeError(
                f"STFTSpectrogram '{self.name}' takes float inputs, got dtype {inputs.dtype}"
            )
        if self.data_format == "channels_last":
            inputs = ops.transpose(inputs, (0, 2, 1))
        batch, channels, samples = inputs.shape
        signals = ops.reshape(inputs, (batch * channels, samples, 1))
        parts = {}
        for side in ("real", "imag"):
            kernel = getattr(self, f"{side}_kernel", None)
            if kernel is not None:
                kernel = ops.cast(kernel, inputs.dtype)
                frames = ops.conv(signals, kernel, self._frame_step, self.padding, "channels_last")
                # (batch * channels, frames, bins) -> (batch, channels, bins, frames)
                parts[side] = ops.transpose(
                    ops.reshape(frames, (batch, channels, *frames.shape[1:])), (0, 1, 3, 2)
                )
        if self.mode in ("real", "imag"):
            return self._arranged(parts[self.mode])
        real, imag = parts["real"], parts["imag"]
        if self.mode == "angle":
            return self._arranged(ops.arctan2(imag, real))
        if self.mode == "stft":
            return self._arranged(ops.concatenate([real, imag], axis=2))
        power = ops.square(real) + ops.square(imag)
        if self.mode == "psd":  # the interior bins stand for their mirror images too
            return self._arranged(
                power + ops.pad(power[:, :, 1:-1], [(0, 0), (0, 0), (1, 1), (0, 0)])
            )
        magnitude = self._arranged(ops.sqrt(ops.maximum(power, config.epsilon())))
        if self.mode == "magnitude":
            return magnitude
        return ops.log(ops.maximum(magnitude, config.epsilon()))

    def _arranged(self, outputs):
        """`(batch, channels, bins, frames)` in the layout of the outputs."""
        batch, channels, bins, frames = outputs.shape
        if self.expand_dims:
            order = (0, 3, 2, 1) if self.data_format == "channels_last" else (0, 1, 3, 2)
            return ops.transpose(outputs, order)
        outputs = ops.reshape(outputs, (batch, channels * bins, frames))
        return ops.transpose(outputs, (0, 2, 1)) if self.data_format == "channels_last" else outputs

    def compute_output_shape(self, input_shape):
        self._check_rank(input_shape)
        if self.data_format == "channels_last":
            batch, samples, channels = input_shape
        else:
            batch, channels, samples = input_shape
        bins = self._fft_length // 2 + 1
        if self.mode == "stft":
            bins *= 2
        frames = output_length(samples, self.frame_length, self._frame_step, self.padding)
        if self.expand_dims:
            if self.data_format == "channels_last":
                return (batch, frames, bins, channels)
            return (batch, channels, frames, bins)
        features = None if channels is None else channels * bins
        if self.data_format == "channels_last":
            return (batch, frames, features)
        return (batch, features, frames)

    def get_config(self):
        return {
            **super().get_config(),
            "mode": self.mode,
            "frame_length": self.frame_length,
            "frame_step": self.frame_step,
            "fft_length": self.fft_length,
            "window": self.window,
            "periodic": self.periodic,
            "scaling": self.scaling,
            "padding": self.padding,
            "data_format": self.data_format,
            "expand_dims": self.expand_dims,
        }
