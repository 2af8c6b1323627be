"""`ScaleAndCenter`: the learned `gamma` and `beta` of the normalization layers."""

from minikeras import constraints, regularizers

__all__ = ["ScaleAndCenter"]


class ScaleAndCenter:
    """`gamma` and `beta` with Keras's regularizers and constraints, for normalization layers.

    A base of `BatchNormalization`, `LayerNormalization` and
    `GroupNormalization`: the layer sets `scale`, `center` and the two
    initializers, calls `_set_penalties` in `__init__`, `_add_scale_and_center`
    in `build`, and adds `_penalties_config()` to its config.

    Example:
        >>> layer = mk.layers.LayerNormalization(gamma_regularizer="l2")
        >>> _ = layer(np.ones((1, 3)))
        >>> layer._penalties_config()["gamma_regularizer"]["class_name"]
        'L2'
    """

    def _set_penalties(
        self, beta_regularizer, gamma_regularizer, beta_constraint, gamma_constraint
    ):
        """Keras's regularizers and constraints of `beta` and `gamma`."""
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = constraints.get(beta_constraint)
        self.gamma_constraint = constraints.get(gamma_constraint)

    def _add_scale_and_center(self, shape, scale=None, center=None):
        """`gamma` and `beta` (None where `scale` / `center`, or the arguments, are off)."""
        self.gamma = self.beta = None
        if self.scale if scale is None else scale:
            self.gamma = self.add_weight(
                "gamma",
                shape=shape,
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
            )
        if self.center if center is None else center:
            self.beta = self.add_weight(
                "beta",
                shape=shape,
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
            )

    def _penalties_config(self):
        return {
            "beta_regularizer": regularizers.serialize(self.beta_regularizer),
            "gamma_regularizer": regularizers.serialize(self.gamma_regularizer),
            "beta_constraint": constraints.serialize(self.beta_constraint),
            "gamma_constraint": constraints.serialize(self.gamma_constraint),
        }
