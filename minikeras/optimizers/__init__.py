"""Optimizers: how gradients change the weights, with Keras 3's names and update rules.

One module per optimizer; `base.py` and `state.py` hold what they share (see
`Optimizer` for what a subclass writes). `get`, `serialize` and `deserialize`
find optimizers by name, through `minikeras.serialization_lib`'s registry for
custom ones. Learning rate schedules are `minikeras.optimizers.schedules`.
"""

from minikeras import serialization_lib
from minikeras.optimizers import schedules
from minikeras.optimizers.adadelta import Adadelta
from minikeras.optimizers.adafactor import Adafactor
from minikeras.optimizers.adagrad import Adagrad
from minikeras.optimizers.adam import Adam
from minikeras.optimizers.adamax import Adamax
from minikeras.optimizers.adamw import AdamW
from minikeras.optimizers.base import Optimizer
from minikeras.optimizers.ftrl import Ftrl
from minikeras.optimizers.lamb import Lamb
from minikeras.optimizers.lion import Lion
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer
from minikeras.optimizers.multi_optimizer import MultiOptimizer, OptimizerMap
from minikeras.optimizers.muon import Muon
from minikeras.optimizers.nadam import Nadam
from minikeras.optimizers.rmsprop import RMSprop
from minikeras.optimizers.schedule_free_adamw import ScheduleFreeAdamW
from minikeras.optimizers.sgd import SGD

__all__ = [
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "Ftrl",
    "Lamb",
    "Lion",
    "LossScaleOptimizer",
    "MultiOptimizer",
    "Muon",
    "Nadam",
    "Optimizer",
    "OptimizerMap",
    "RMSprop",
    "SGD",
    "ScheduleFreeAdamW",
    "deserialize",
    "get",
    "schedules",
    "serialize",
]

_OPTIMIZERS = {
    cls.__name__.lower(): cls
    for cls in (
        SGD,
        Adam,
        AdamW,
        RMSprop,
        Adagrad,
        Adamax,
        Nadam,
        Lion,
        Adadelta,
        Lamb,
        Ftrl,
        Muon,
        ScheduleFreeAdamW,
        Adafactor,
    )  # fmt: skip
}
# Optimizers that wrap another: found by their config, never made from a name alone.
_WRAPPERS = {"lossscaleoptimizer": LossScaleOptimizer, "multioptimizer": MultiOptimizer}


def serialize(optimizer):
    """Returns Keras 3's entry (`module`, `class_name`, `config`, `registered_name`).

    `deserialize` turns it back (and reads the short `{"class_name",
    "config"}` form too).

    Args:
        optimizer: an `Optimizer`.

    Returns:
        A dict (JSON-friendly unless the learning rate is a plain callable).

    Raises:
        ValueError: for anything that is not an `Optimizer`.

    Example:
        >>> mk.optimizers.serialize(mk.optimizers.SGD(0.1))["class_name"]
        'SGD'
    """
    if not isinstance(optimizer, Optimizer):
        raise ValueError(
            "optimizers.serialize: expected an Optimizer, got "
            f"{optimizer!r} of type {type(optimizer).__name__}"
        )
    return serialization_lib.family_entry(optimizer)


def deserialize(config, custom_objects=None):
    """Makes a new optimizer from `serialize`'s dict, or from a name.

    Args:
        config: a dict `{"class_name": ..., "config": {...}}` or a name such
            as `"adam"` (any case).
        custom_objects: optional dict of class name -> Optimizer or schedule
            class, searched first.

    Returns:
        An `Optimizer`.

    Raises:
        ValueError: for an unknown name or a dict without `"class_name"`.

    Example:
        >>> config = {"class_name": "Adam", "config": {"learning_rate": 0.01}}
        >>> mk.optimizers.deserialize(config).learning_rate.numpy()
        array(0.01, dtype=float32)
    """
    if isinstance(config, str):
        config = {"class_name": config, "config": {}}
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            "optimizers.deserialize: expected a name or a dict with 'class_name' and 'config', "
            f"got {config!r}"
        )
    name = config.get("registered_name") or config["class_name"]
    cls = serialization_lib.entry_class(
        config, custom_objects, "optimizer", lambda name: _OPTIMIZERS.get(str(name).lower())
    )
    cls = cls or serialization_lib.get_registered_object(name, custom_objects)
    cls = cls or _OPTIMIZERS.get(str(name).lower())
    if cls is None and config.get("config"):
        cls = _WRAPPERS.get(str(name).lower())
    custom_objects = custom_objects or {}
    if cls is None:
        raise ValueError(
            f"Unknown optimizer {name!r}; known optimizers: {', '.join(_OPTIMIZERS)}"
            + serialization_lib.unknown_custom_hint(name)
        )
    return cls.from_config(config.get("config") or {}, custom_objects)


def get(identifier):
    """Returns the optimizer `identifier` stands for.

    Args:
        identifier: None (returned as None, as in Keras), a name such as
            `"adam"`, a dict from `serialize`, an `Optimizer` (returned as it
            is) or an `Optimizer` class (made with its defaults).

    Returns:
        An `Optimizer`, or None.

    Raises:
        ValueError: for an unknown name or anything else.

    Example:
        >>> mk.optimizers.get("rmsprop")
        <RMSprop 'rmsprop' learning_rate=0.001 iterations=0>
    """
    if identifier is None or isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Optimizer):
        return identifier()
    raise ValueError(
        "optimizers.get: expected a name, a config dict or an Optimizer, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )
