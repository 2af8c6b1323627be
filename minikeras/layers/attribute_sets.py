"""Counting attribute sets on built layers: what makes a recorded call stale.

A replay (`models.replayed_call`, `trainers.compiled_step`) repeats what a
model's `call` did when it was recorded, Python attributes included (a
Dropout's `rate`, a subclassed model's `self.scale`). `Layer.__setattr__`
counts each set on a built layer, in the layer (`_attribute_sets`) and in
one counter for the process (`AttributeSets.value`): a replay compares the
process's counter first, and only when it moved sums its own layers'.
"""

__all__ = ["AttributeSets", "count_set"]


class AttributeSets:
    """How many attributes of built layers were set, in the whole process.

    Example:
        >>> from minikeras.layers.attribute_sets import AttributeSets
        >>> layer = mk.layers.Dropout(0.5)
        >>> layer.build((None, 2))
        >>> before = AttributeSets.value
        >>> layer.rate = 0.25
        >>> AttributeSets.value - before, layer._attribute_sets
        (1, 1)
    """

    value = 0


def count_set(attributes):
    """Counts one attribute set on a built layer, given its `__dict__`.

    Args:
        attributes: the layer's instance dict.

    Returns:
        None.

    Example:
        >>> from minikeras.layers.attribute_sets import count_set
        >>> attributes = {}
        >>> count_set(attributes)
        >>> attributes["_attribute_sets"]
        1
    """
    attributes["_attribute_sets"] = attributes.get("_attribute_sets", 0) + 1
    AttributeSets.value += 1
