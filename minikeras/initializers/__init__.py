"""Weight initializers: how the first values of a Variable are drawn.

An initializer is a callable `initializer(shape, dtype=None)` that returns a
numpy array, of `config.floatx()` (float32) unless another dtype is asked for.
Names, arguments and defaults are Keras's, and each is also known by its
snake_case name (`"glorot_uniform"`), as a string and, as in Keras, as a
name of this package (`mk.initializers.glorot_uniform` is `GlorotUniform`).

Randomness: an initializer with `seed=None` draws from the global generator
of `minikeras.random` (reseeded by `minikeras.utils.set_random_seed`). One
with an int seed starts a fresh generator from that seed on every call, so,
as in Keras 3, it returns the same values each time.
"""

import inspect

from minikeras import serialization_lib
from minikeras.initializers.constant_initializers import Constant, Identity, Ones, Zeros
from minikeras.initializers.initializer import Initializer, compute_fans
from minikeras.initializers.random_initializers import (
    Orthogonal,
    RandomNormal,
    RandomUniform,
    TruncatedNormal,
)
from minikeras.initializers.stft_kernels import STFT
from minikeras.initializers.variance_scaling import (
    GlorotNormal,
    GlorotUniform,
    HeNormal,
    HeUniform,
    LecunNormal,
    LecunUniform,
    VarianceScaling,
)

# The other names Keras exports for the same classes (`variance_scaling` was this
# package's submodule of that name; the class takes its place, as in Keras).
IdentityInitializer = identity = Identity
OrthogonalInitializer = orthogonal = Orthogonal
zeros, ones, constant = Zeros, Ones, Constant
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
he_uniform, he_normal = HeUniform, HeNormal
lecun_uniform, lecun_normal = LecunUniform, LecunNormal
variance_scaling = VarianceScaling
STFTInitializer = stft = STFT

__all__ = [
    "Constant",
    "GlorotNormal",
    "GlorotUniform",
    "HeNormal",
    "HeUniform",
    "Identity",
    "IdentityInitializer",
    "Initializer",
    "LecunNormal",
    "LecunUniform",
    "Ones",
    "Orthogonal",
    "OrthogonalInitializer",
    "RandomNormal",
    "RandomUniform",
    "STFT",
    "STFTInitializer",
    "TruncatedNormal",
    "VarianceScaling",
    "Zeros",
    "compute_fans",
    "constant",
    "deserialize",
    "get",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "identity",
    "lecun_normal",
    "lecun_uniform",
    "ones",
    "orthogonal",
    "random_normal",
    "random_uniform",
    "serialize",
    "stft",
    "truncated_normal",
    "variance_scaling",
    "zeros",
]


_INITIALIZERS = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "random_normal": RandomNormal,
    "random_uniform": RandomUniform,
    "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_normal": HeNormal,
    "he_uniform": HeUniform,
    "lecun_normal": LecunNormal,
    "lecun_uniform": LecunUniform,
    "orthogonal": Orthogonal,
    "identity": Identity,
    "stft": STFT,
    # Keras's short aliases.
    "zero": Zeros,
    "one": Ones,
    "normal": RandomNormal,
    "uniform": RandomUniform,
    # Keras's second class names.
    "IdentityInitializer": Identity,
    "OrthogonalInitializer": Orthogonal,
    "STFTInitializer": STFT,
}
# Class names work too, as in Keras: get("GlorotUniform").
_INITIALIZERS.update({cls.__name__: cls for cls in list(_INITIALIZERS.values())})


def _lookup(name, custom_objects):
    # Custom objects, open scopes and the one registry first (see minikeras.serialization_lib).
    found = serialization_lib.get_registered_object(name, custom_objects)
    if found is not None:
        return found
    if name in _INITIALIZERS:
        return _INITIALIZERS[name]
    known = ", ".join(name for name in _INITIALIZERS if name.islower())
    raise ValueError(
        f"Unknown initializer {name!r}; known initializers: {known}"
        + serialization_lib.unknown_custom_hint(name)
    )


def serialize(initializer):
    """Returns Keras 3's entry (`module`, `class_name`, `config`, `registered_name`).

    `deserialize` turns it back (and reads the short `{"class_name",
    "config"}` form too).

    Args:
        initializer: an `Initializer`.

    Returns:
        A dict of JSON-friendly values.

    Raises:
        ValueError: for anything that is not an `Initializer`.

    Example:
        >>> mk.initializers.serialize(mk.initializers.HeNormal(seed=1))
        {'module': 'keras.initializers', 'class_name': 'HeNormal', 'config': {'seed': 1}, 'registered_name': None}
    """  # noqa: E501
    if not isinstance(initializer, Initializer):
        raise ValueError(
            "initializers.serialize: expected an Initializer, got "
            f"{initializer!r} of type {type(initializer).__name__}"
        )
    return serialization_lib.family_entry(initializer)


def deserialize(config, custom_objects=None):
    """Makes an initializer from `serialize`'s dict, or from a name.

    Args:
        config: a dict `{"class_name": ..., "config": {...}}` (other keys are
            ignored) or a name such as `"glorot_uniform"`.
        custom_objects: optional dict of name -> Initializer class, searched first.

    Returns:
        An initializer.

    Raises:
        ValueError: for an unknown name or a dict without `"class_name"`.

    Example:
        >>> mk.initializers.deserialize({"class_name": "RandomNormal", "config": {"stddev": 1.0}})
        RandomNormal(mean=0.0, stddev=1.0, seed=None)
    """
    if isinstance(config, str):
        return _lookup(config, custom_objects)()
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            "initializers.deserialize: expected a name or a dict with 'class_name' and "
            f"'config', got {config!r}"
        )
    cls = serialization_lib.entry_class(config, custom_objects, "initializer", _INITIALIZERS.get)
    cls = cls or _lookup(config.get("registered_name") or config["class_name"], custom_objects)
    return cls.from_config(config.get("config") or {})


def get(identifier):
    """Returns the initializer `identifier` stands for.

    Args:
        identifier: None (returned as None, as in Keras), a name such as
            `"he_normal"`, a dict from `serialize`, an `Initializer` class
            (instantiated with defaults) or a callable (returned as it is).

    Returns:
        A callable `initializer(shape, dtype=None)`, or None.

    Raises:
        ValueError: for an unknown name or anything else.

    Example:
        >>> mk.initializers.get("glorot_uniform")
        GlorotUniform(seed=None)
        >>> mk.initializers.get("zeros")((2,))
        array([0., 0.], dtype=float32)
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if inspect.isclass(identifier):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(
        "initializers.get: expected a name, a config dict or a callable, "
        f"got {identifier!r} of type {type(identifier).__name__}"
    )
