"""`SpectralNormalization`: a wrapped layer's kernel divided by its largest singular value."""

import numpy as np

from minikeras import initializers, ops
from minikeras.layers.input_spec import InputSpec
from minikeras.layers.wrapper import Wrapper

__all__ = ["SpectralNormalization"]

_EPSILON = 1e-7  # (Keras's backend epsilon, the floor of a norm in its `normalize`)


def _unit(vector):
    """`vector / norm(vector)`, as Keras's `normalize(axis=None)`: `1/norm` at most `1/1e-7`."""
    norm = np.sqrt(np.sum(np.square(vector)))
    return vector * np.minimum(1.0 / norm if norm > 0 else np.inf, 1.0 / _EPSILON).astype(
        vector.dtype
    )


def _floating(dtype):
    return np.issubdtype(np.dtype(dtype), np.floating)


class SpectralNormalization(Wrapper):
    """Divides a wrapped layer's kernel by its spectral norm while training (Miyato et al., 2018).

    The kernel `W`, seen as a matrix `(-1, units)` (its last axis kept), has
    its largest singular value `sigma` estimated by power iteration, starting
    from the kept vector `u`:

        v = unit(u @ W.T);  u = unit(v @ W)     (power_iterations times)
        sigma = v @ W @ u.T
        W = W / sigma

    Its `weights` (and `get_weights`, `set_weights`) come in Keras's order:
    the kernel, `vector_u`, then the wrapped layer's other weights.

    Called with `training=True`, the layer assigns the new `u` to its
    non-trainable weight `vector_u` and `W / sigma` to the wrapped layer's
    kernel (left as it is if all zeros), then calls the wrapped layer; at
    inference the kernel and `vector_u` are used as they are. The kernel is
    the wrapped layer's `kernel` or, failing that, its `embeddings`. As the
    kernel is assigned, a gradient step updates the normalized kernel, as in
    Keras's TensorFlow and PyTorch backends (its JAX backend differentiates
    through the division instead and keeps the kernel unnormalized during
    `fit`). Floating outputs are cast to the inputs' dtype, as Keras casts
    them; integer inputs (an `Embedding`'s ids) leave the outputs floating,
    where Keras casts them to integers.

    Args:
        layer: a `Layer` with a `kernel` (`Dense`, `Conv2D`, ...) or
            `embeddings` (`Embedding`) weight.
        power_iterations: a positive int, the iterations per training call.
        **kwargs: `name`, `trainable`, `dtype`.

    Input shape:
        What the wrapped layer takes (at least 1 axis).

    Output shape:
        What the wrapped layer gives.

    Raises:
        ValueError: for `power_iterations` not a positive int, a wrapped
            layer with neither `kernel` nor `embeddings`, or not a `Layer`.

    Example:
        >>> layer = mk.layers.SpectralNormalization(mk.layers.Dense(3), power_iterations=20)
        >>> _ = layer(np.ones((1, 4)), training=True)
        >>> float(np.linalg.norm(layer.kernel.numpy(), 2)).__round__(3)
        1.0
        >>> layer.vector_u.shape, layer.vector_u.trainable
        ((1, 3), False)
    """

    # Keras lists the kernel (its own too) and vector_u before the wrapped layer's others:
    # so does creation order, with vector_u placed after the kernel (see build).
    _weights_in_creation_order = True

    def __init__(self, layer, power_iterations=1, **kwargs):
        super().__init__(layer, **kwargs)
        if (
            isinstance(power_iterations, bool)
            or not isinstance(power_iterations, (int, np.integer))
            or power_iterations <= 0
        ):
            raise ValueError(
                "SpectralNormalization: `power_iterations` must be a positive int, got "
                f"{power_iterations!r}"
            )
        self.power_iterations = int(power_iterations)

    @property
    def kernel(self):
        """The wrapped layer's `kernel` (or `embeddings`) variable, once built; else None."""
        for name in ("kernel", "embeddings"):
            found = getattr(self.layer, name, None)
            if found is not None:
                return found
        return None

    def build(self, input_shape):
        super().build(input_shape)
        kernel = self.kernel
        if kernel is None:
            raise ValueError(
                f"SpectralNormalization '{self.name}' needs a layer with a `kernel` or "
                f"`embeddings` weight, got {type(self.layer).__name__} '{self.layer.name}'"
            )
        self.input_spec = InputSpec(min_ndim=1, axes={-1: input_shape[-1]})
        self.vector_u = self.add_weight(
            name="vector_u",
            shape=(1, kernel.shape[-1]),
            initializer=initializers.TruncatedNormal(stddev=0.02),
            dtype=kernel.dtype,
            trainable=False,
        )
        # Keras tracks the kernel as the wrapper's own variable, and lists a layer's own
        # variables before its sublayers': kernel, vector_u, then the wrapped layer's others.
        # This layer lists its weights by creation index (`_weights_in_creation_order`),
        # so vector_u takes the place after the kernel.
        self.vector_u._index = kernel._index + 0.5

    def normalized_weights(self):
        """The next `vector_u` and the kernel divided by its estimated spectral norm.

        Returns:
            A pair of numpy arrays `(vector_u, kernel)`, in the weights' dtypes.

        Example:
            >>> layer = mk.layers.SpectralNormalization(mk.layers.Dense(2))
            >>> layer.build((None, 2))
            >>> _ = layer.layer.kernel.assign(np.diag([3.0, 1.0]))
            >>> _ = layer.vector_u.assign([[1.0, 0.0]])
            >>> u, kernel = layer.normalized_weights()
            >>> u.tolist(), kernel.tolist()
            ([[1.0, 0.0]], [[1.0, 0.0], [0.0, 0.3333333432674408]])
        """
        kernel = self.kernel.numpy()
        weights = kernel.reshape(-1, kernel.shape[-1])
        vector_u = self.vector_u.numpy()
        for _ in range(self.power_iterations):
            vector_v = _unit(vector_u @ weights.T)
            vector_u = _unit(vector_v @ weights)
        sigma = (vector_v @ weights) @ vector_u.T
        return vector_u.astype(self.vector_u.dtype), (kernel / sigma).astype(kernel.dtype)

    def call(self, inputs, training=False):
        if training and np.any(self.kernel.numpy() != 0):
            vector_u, kernel = self.normalized_weights()
            self.vector_u.assign(vector_u)
            self.kernel.assign(kernel)
        outputs = self.layer(inputs)
        if _floating(inputs.dtype) and _floating(outputs.dtype):
            outputs = ops.cast(outputs, inputs.dtype)
        return outputs

    def compute_output_shape(self, input_shape):
        return self.layer.compute_output_shape(input_shape)

    def save_own_variables(self, store):
        """Writes the kernel then `vector_u`, where Keras keeps them (its layout).

        Keras tracks the wrapped layer's kernel as the wrapper's own variable
        too, so its file holds it twice: under the wrapped layer and here.

        Args:
            store: a dict-like object taking arrays by string key.

        Returns:
            None.

        Example:
            >>> layer = mk.layers.SpectralNormalization(mk.layers.Dense(2))
            >>> layer.build((None, 3))
            >>> store = {}
            >>> layer.save_own_variables(store)
            >>> store["0"].shape, store["1"].shape
            ((3, 2), (1, 2))
        """
        store["0"] = self.kernel.numpy()
        store["1"] = self.vector_u.numpy()

    def load_own_variables(self, store):
        """Reads what `save_own_variables` (or Keras) wrote: the kernel and `vector_u`.

        Args:
            store: a dict-like object with the arrays under `"0"` and `"1"`.

        Returns:
            None.

        Raises:
            ValueError: naming the layer, if an array is missing or misshaped.

        Example:
            >>> layer = mk.layers.SpectralNormalization(mk.layers.Dense(2))
            >>> layer.build((None, 3))
            >>> layer.load_own_variables({"0": np.ones((3, 2)), "1": np.ones((1, 2))})
            >>> layer.vector_u.numpy().tolist()
            [[1.0, 1.0]]
        """
        pairs = [("0", self.kernel), ("1", self.vector_u)]
        for key, variable in pairs:
            array = np.asarray(store[key]) if key in store else None
            if array is None or array.shape != variable.shape or array.dtype.kind not in "biuf":
                found = None if array is None else array.shape
                raise ValueError(
                    f"SpectralNormalization '{self.name}'.load_own_variables: expected "
                    f"{variable.name} of shape {variable.shape} under {key!r}, got {found} "
                    f"(keys {sorted(store)})"
                )
        for key, variable in pairs:
            variable.assign(np.asarray(store[key]).astype(variable.dtype))

    def get_config(self):
        return {**super().get_config(), "power_iterations": self.power_iterations}
