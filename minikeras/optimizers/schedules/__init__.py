"""Learning rate schedules: the learning rate as a function of the optimizer step.

An optimizer given a schedule calls it with its `iterations` (0 on the first
update) and uses the Python float it returns. The formulas are Keras 3's
(`keras.optimizers.schedules`), in `learning_rate_schedule.py`; this module
finds them by name.
"""

from minikeras import serialization_lib
from minikeras.optimizers._checks import check_number
from minikeras.optimizers.schedules.cosine_restarts import CosineDecayRestarts
from minikeras.optimizers.schedules.learning_rate_schedule import (
    CosineDecay,
    ExponentialDecay,
    InverseTimeDecay,
    LearningRateSchedule,
    PiecewiseConstantDecay,
    PolynomialDecay,
)

__all__ = [
    "CosineDecay",
    "CosineDecayRestarts",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LearningRateSchedule",
    "PiecewiseConstantDecay",
    "PolynomialDecay",
    "check_number",
    "deserialize",
    "serialize",
]

_SCHEDULES = {
    cls.__name__: cls
    for cls in (
        ExponentialDecay,
        PiecewiseConstantDecay,
        InverseTimeDecay,
        PolynomialDecay,
        CosineDecay,
        CosineDecayRestarts,
    )
}


def serialize(learning_rate_schedule):
    """Returns Keras 3's entry (`module`, `class_name`, `config`, `registered_name`).

    `deserialize` turns it back (and reads the short `{"class_name",
    "config"}` form too).

    Args:
        learning_rate_schedule: a `LearningRateSchedule` (Keras's name for the argument).

    Returns:
        A dict of JSON-friendly values.

    Raises:
        ValueError: for anything that is not a `LearningRateSchedule`.

    Example:
        >>> mk.optimizers.schedules.serialize(
        ...     mk.optimizers.schedules.InverseTimeDecay(0.1, 10, 0.5)
        ... )["class_name"]
        'InverseTimeDecay'
    """
    schedule = learning_rate_schedule
    if not isinstance(schedule, LearningRateSchedule):
        raise ValueError(
            "schedules.serialize: expected a LearningRateSchedule, got "
            f"{schedule!r} of type {type(schedule).__name__}"
        )
    return serialization_lib.family_entry(schedule)


def deserialize(config, custom_objects=None):
    """Makes a schedule from `serialize`'s dict.

    Args:
        config: a dict `{"class_name": ..., "config": {...}}`.
        custom_objects: optional dict of class name -> schedule class, searched first.

    Returns:
        A `LearningRateSchedule`.

    Raises:
        ValueError: for an unknown class name or a dict without `"class_name"`.

    Example:
        >>> mk.optimizers.schedules.deserialize({"class_name": "ExponentialDecay",
        ...              "config": {"initial_learning_rate": 1.0, "decay_steps": 1,
        ...                         "decay_rate": 0.5}})(2)
        0.25
    """
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            f"schedules.deserialize: expected a dict with 'class_name' and 'config', got {config!r}"
        )
    name = config.get("registered_name") or config["class_name"]
    cls = serialization_lib.entry_class(
        config, custom_objects, "learning rate schedule", _SCHEDULES.get
    )
    cls = cls or serialization_lib.get_registered_object(name, custom_objects, _SCHEDULES)
    if cls is None:
        raise ValueError(
            f"Unknown learning rate schedule {name!r}; known schedules: {', '.join(_SCHEDULES)}"
            + serialization_lib.unknown_custom_hint(name)
        )
    return cls.from_config(config.get("config") or {})
