"""`to_snake_case`: the default names of layers, losses and metrics, as Keras makes them."""

import re

__all__ = ["to_snake_case"]


def to_snake_case(name):
    """A CamelCase class name in snake_case, by Keras's rule.

    Characters that cannot be in a name (`\\W`: spaces, dashes, dots) are
    dropped; a word starts at a capital followed by a lowercase letter, or at
    a capital after a lowercase letter; a digit does not start a word, so
    `SpatialDropout2D` becomes `spatial_dropout2d` and `KLDivergence`
    becomes `kl_divergence`. Keras's containers in a `.keras` file are named
    by the same rule (`saving.keras_layout`).

    Args:
        name: a class name.

    Returns:
        The name in lowercase words joined by underscores.

    Example:
        >>> from minikeras.utils import to_snake_case
        >>> to_snake_case("MeanSquaredError"), to_snake_case("SpatialDropout2D")
        ('mean_squared_error', 'spatial_dropout2d')
    """
    name = re.sub(r"\W+", "", name)
    return re.sub(r"(?<=.)(?=[A-Z][a-z])|(?<=[a-z])(?=[A-Z])", "_", name).lower()
