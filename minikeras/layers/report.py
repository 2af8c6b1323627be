"""`TrackingReport`: what a model tracks, row by row, and what it saw escape."""

from typing import NamedTuple

from minikeras.engine.variable import Variable
from minikeras.layers import tracking

__all__ = ["Row", "TrackingReport"]


class Row(NamedTuple):
    """One tracked weight: where it lives and what it is."""

    path: str
    layer: str
    shape: tuple
    dtype: str
    trainable: bool


class TrackingReport:
    """The weights a layer or model tracks, and the untracked ones it saw used.

    Args:
        rows: a list of `Row`s, one per tracked weight, in `weights` order.
        untracked: a list of `(variable_name, shape, used_by_layer)` for
            Variables read in forward passes that the model does not track.

    Example:
        >>> from minikeras.layers import Dense
        >>> d = Dense(2, name="d"); d.build((None, 3))
        >>> print(d.tracking_report())  # doctest: +NORMALIZE_WHITESPACE
        path    layer  shape   dtype    trainable
        kernel  d      (3, 2)  float32  True
        bias    d      (2,)    float32  True
        2 weights tracked; no untracked variables seen in forward passes.
    """

    def __init__(self, rows, untracked):
        self.rows = rows
        self.untracked = untracked

    @classmethod
    def of(cls, layer):
        """Builds the report of `layer`.

        Args:
            layer: a `Layer` or `Model`.

        Returns:
            A `TrackingReport`.

        Example:
            >>> from minikeras.layers import Layer
            >>> mk.layers.TrackingReport.of(Layer()).rows
            []
        """
        found = [
            (path, owner, value)
            for path, owner, value in tracking.walk(layer)
            if isinstance(value, Variable)
        ]
        order = {id(variable): index for index, variable in enumerate(layer.weights)}
        found.sort(key=lambda item: order[id(item[2])])
        rows = [
            Row(path, owner.name, tuple(v.shape), str(v.dtype), bool(v.trainable))
            for path, owner, v in found
        ]
        tracked = {id(variable) for _, _, variable in found}
        # A Variable seen untracked that the model has tracked since is not listed.
        untracked = [
            (variable.name, tuple(variable.shape), used_by)
            for variable, used_by in layer._untracked_seen.values()
            if id(variable) not in tracked
        ]
        return cls(rows, untracked)

    def __str__(self):
        header = ("path", "layer", "shape", "dtype", "trainable")
        table = [header] + [
            (r.path, r.layer, str(r.shape), r.dtype, str(r.trainable)) for r in self.rows
        ]
        widths = [max(len(line[i]) for line in table) for i in range(len(header))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in table
        ]
        count = f"{len(self.rows)} weight{'s' if len(self.rows) != 1 else ''} tracked"
        if not self.untracked:
            lines.append(f"{count}; no untracked variables seen in forward passes.")
        else:
            lines.append(f"{count}. Untracked variables seen in forward passes (not trained):")
            lines.extend(
                f"  {name} {shape} used by '{used_by}'" for name, shape, used_by in self.untracked
            )
        return "\n".join(lines)

    __repr__ = __str__
