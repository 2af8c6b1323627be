"""`Discretization`: numbers to the index of the range (bin) they fall in."""

import numpy as np

from minikeras.engine.tensor import Tensor
from minikeras.layers.input_layer import SymbolicTensor
from minikeras.layers.layer import Layer
from minikeras.layers.preprocessing.encoding import check_output_mode, encode, encoded_shape
from minikeras.layers.preprocessing.numerical import batches_of

__all__ = ["Discretization"]


class Discretization(Layer):
    """Buckets numbers by ranges: the index of the bin each value falls in.

    With boundaries `[b0, b1, ...]` the bins are `(-inf, b0)`, `[b0, b1)`,
    ..., `[b_last, inf)`, numbered from 0. The boundaries are given, or
    learnt by `adapt(data)` as `num_bins` quantiles of the data, with
    Keras's approximate quantile summary (precision `epsilon`), which gives
    Keras's boundaries.

    Args:
        bin_boundaries: a sorted list of numbers; None to learn `num_bins`
            bins with `adapt`.
        num_bins: the number of bins to learn with `adapt`.
        epsilon: the precision of the quantile summary that `adapt` keeps.
        output_mode: `"int"` (the bin indices, int32), `"one_hot"`,
            `"multi_hot"` or `"count"` (see `CategoryEncoding`).
        sparse: must be False (sparse outputs are not supported).
        **kwargs: `name`, `dtype`.

    Input shape:
        Any shape.

    Output shape:
        As the inputs for `"int"`; see `CategoryEncoding` for the others.

    Raises:
        ValueError: for both or neither of `bin_boundaries` and `num_bins`,
            an unknown `output_mode`, or `sparse=True`.

    Example:
        >>> layer = mk.layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
        >>> layer(np.array([[-1.5, 0.0, 1.5, 2.0]])).numpy()
        array([[0, 1, 2, 3]], dtype=int32)
    """

    def __init__(
        self,
        bin_boundaries=None,
        num_bins=None,
        epsilon=0.01,
        output_mode="int",
        sparse=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.output_mode = check_output_mode("Discretization", output_mode)
        if sparse:
            raise ValueError("Discretization: `sparse=True` is not supported by minikeras")
        if (num_bins is None) == (bin_boundaries is None):
            raise ValueError(
                f"Discretization: give exactly one of `bin_boundaries` and `num_bins`, got "
                f"bin_boundaries={bin_boundaries!r} and num_bins={num_bins!r}"
            )
        if num_bins is not None and (
            isinstance(num_bins, bool)
            or not isinstance(num_bins, (int, np.integer))
            or num_bins < 1
        ):
            raise ValueError(f"Discretization: `num_bins` must be an int >= 1, got {num_bins!r}")
        if bin_boundaries is not None:
            bin_boundaries = [float(b) for b in bin_boundaries]
            if any(b > a for a, b in zip(bin_boundaries[1:], bin_boundaries)):
                raise ValueError(
                    f"Discretization: `bin_boundaries` must be sorted, got {bin_boundaries}"
                )
        self.bin_boundaries = bin_boundaries
        self.num_bins = num_bins
        self.epsilon = float(epsilon)
        self.sparse = False

    def adapt(self, data):
        """Learns `num_bins - 1` boundaries: the quantiles of all values in `data`.

        Args:
            data: an array, or an iterable of batches (arrays).

        Returns:
            None.

        Raises:
            ValueError: if the layer was made with `bin_boundaries`.

        Example:
            >>> layer = mk.layers.Discretization(num_bins=2)
            >>> layer.adapt(np.arange(10.0))
            >>> layer.bin_boundaries
            [4.0]
        """
        if self.num_bins is None:
            raise ValueError(
                f"Discretization '{self.name}' was made with `bin_boundaries`; give `num_bins` "
                "to adapt"
            )
        summary = np.zeros((2, 0), dtype="float32")
        for batch in batches_of("Discretization", data):
            values = np.sort(batch.astype("float32").ravel())
            # Every `step`-th sorted value stands for `step` values (Keras's summary).
            step = max(values.size * self.epsilon, 1)
            kept = values[int(step - 1) :: int(step)]
            merged = np.concatenate([summary, [kept, np.full(kept.size, step)]], axis=1)
            summary = _compress(merged[:, np.argsort(merged[0], kind="stable")], self.epsilon)
        if summary.shape[1] == 0:
            raise ValueError(f"Discretization '{self.name}'.adapt: `data` holds no values")
        self.bin_boundaries = _compress(summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError(
                f"Discretization '{self.name}' has no bin boundaries: pass `bin_boundaries` or "
                "call adapt() first"
            )
        values = inputs.numpy() if isinstance(inputs, Tensor) else np.asarray(inputs)
        indices = np.searchsorted(np.asarray(self.bin_boundaries), values, side="right")
        depth = len(self.bin_boundaries) + 1
        dtype = "int32" if self.output_mode == "int" else self.compute_dtype
        return Tensor(encode(indices.astype("int32"), self.output_mode, depth, dtype))

    def compute_output_spec(self, inputs, *args, **kwargs):
        # (int32 bins in "int" mode, not the compute dtype of Layer's spec; as Keras)
        dtype = "int32" if self.output_mode == "int" else self.compute_dtype
        return SymbolicTensor(self.compute_output_shape(inputs.shape), dtype)

    def compute_output_shape(self, input_shape):
        depth = self.num_bins if self.bin_boundaries is None else len(self.bin_boundaries) + 1
        return encoded_shape(input_shape, self.output_mode, depth)

    def get_config(self):
        # Keras's Discretization takes no `trainable` (it has no weights): left out,
        # so that Keras loads the config.
        config = {key: value for key, value in super().get_config().items() if key != "trainable"}
        return {
            **config,
            "bin_boundaries": self.bin_boundaries,
            "num_bins": self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }

    @classmethod
    def from_config(cls, config):
        """Rebuilds the layer; learnt boundaries come back with `num_bins`.

        Args:
            config: a dict from `get_config`.

        Returns:
            A new `Discretization`.

        Example:
            >>> layer = mk.layers.Discretization(num_bins=2)
            >>> layer.adapt(np.arange(10.0))
            >>> mk.layers.Discretization.from_config(layer.get_config()).bin_boundaries
            [4.0]
        """
        config = dict(config)
        boundaries = config.pop("bin_boundaries", None)
        if config.get("num_bins") is None:
            return cls(bin_boundaries=boundaries, **config)
        layer = cls(**config)
        layer.bin_boundaries = boundaries
        return layer


def _compress(summary, epsilon):
    """Re-bins a (values, weights) summary at cumulative-weight fractions epsilon, 2 epsilon..."""
    if summary.shape[1] * epsilon < 1:
        return summary
    fractions = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    at = cumulative / cumulative[-1]
    values = np.interp(fractions, at, summary[0])
    cumulative = np.interp(fractions, at, cumulative)
    weights = np.diff(cumulative, prepend=0.0)
    return np.stack([values, weights]).astype("float32")
