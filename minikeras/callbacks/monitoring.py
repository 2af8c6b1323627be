"""What the callbacks that watch a quantity share: its direction, the mode, its value."""

import warnings

__all__ = []


def _metric_direction(monitor, model):
    """Returns "min" or "max" for a monitored quantity, or None when it cannot be told.

    Keras 3's rule (a loss is minimized; a metric of the model that declares
    `_direction` "up"/"down" says so), then the names of common metrics.
    """
    name = monitor.removeprefix("val_")
    if name == "loss":
        return "min"
    metrics = list(getattr(model, "metrics", None) or [])
    for metric in metrics:
        metrics.extend(getattr(metric, "metrics", None) or [])  # containers of metrics
        direction = getattr(metric, "_direction", None)
        if getattr(metric, "name", None) == name and direction in ("up", "down"):
            return "max" if direction == "up" else "min"
    if any(hint in name for hint in ("acc", "auc", "precision", "recall", "f1")):
        return "max"
    lower_is_better = ("loss", "error", "mse", "mae", "mape", "msle", "crossentropy", "hinge")
    if any(hint in name for hint in (*lower_is_better, "divergence", "poisson", "logcosh")):
        return "min"
    return None


def _check_mode(owner, mode):
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{owner} mode {mode!r} is unknown, fallback to auto mode.", stacklevel=3)
        return "auto"
    return mode


def _monitored_value(owner, monitor, logs):
    value = (logs or {}).get(monitor)
    if value is None:
        warnings.warn(
            f"{owner} conditioned on metric `{monitor}` which is not available. "
            f"Available metrics are: {','.join(logs or {})}",
            stacklevel=3,
        )
    return value
