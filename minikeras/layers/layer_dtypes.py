"""`LayerDTypes`: the part of `Layer` that says which dtypes it computes and keeps weights in.

A layer's `DTypePolicy` (its `dtype` argument, `mk.config.dtype_policy()` by
default) gives `compute_dtype` (inputs are cast to it, outputs have it) and
`variable_dtype` (`add_weight` makes weights in it); `dtype` is the latter, as
in Keras 3. `Layer` inherits it; it is not used on its own.
"""

from minikeras.layers.attribute_sets import count_set
from minikeras.layers.layer_config import layer_dtype_policy

__all__ = ["LayerDTypes"]


class LayerDTypes:
    """The dtype part of `Layer` (see the module); not used on its own.

    Example:
        >>> layer = mk.layers.Dense(2, dtype="mixed_float16")
        >>> layer.dtype, layer.compute_dtype, layer.dtype_policy.name
        ('float32', 'float16', 'mixed_float16')
    """

    @property
    def dtype_policy(self):
        """The layer's `DTypePolicy`; set it to a name, a policy or None (the global one).

        Setting it changes how later calls compute and in which dtype later
        weights are made; weights already made keep their dtype.
        """
        return self._dtype_policy

    @dtype_policy.setter
    def dtype_policy(self, value):
        self._set_dtype_policy(layer_dtype_policy(self, value))

    def _set_dtype_policy(self, policy):
        setter = object.__setattr__
        attributes = self.__dict__
        if attributes.get("built"):  # a recording of `call` is stale (models.replayed_call)
            count_set(attributes)
        compute, variable = policy.compute_dtype, policy.variable_dtype
        setter(self, "_dtype_policy", policy)
        setter(self, "_compute_dtype", compute)  # (read at every call)
        # The autocast scope a call opens outside any other: only a mixed policy opens one.
        mixed = compute.startswith("float") and compute != variable
        setter(self, "_autocast_alone", compute if mixed else None)

    @property
    def dtype(self):
        """The dtype of the layer's weights: `variable_dtype`, as in Keras 3."""
        return self._dtype_policy.variable_dtype

    @property
    def compute_dtype(self):
        """The dtype the layer computes in: its inputs are cast to it, its outputs have it."""
        return self._compute_dtype

    @property
    def variable_dtype(self):
        """The dtype `add_weight` makes weights in, unless it is given one."""
        return self._dtype_policy.variable_dtype

    @property
    def input_dtype(self):
        """The dtype floating inputs are cast to: `compute_dtype`."""
        return self._compute_dtype
