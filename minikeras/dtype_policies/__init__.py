"""Dtype policies: which dtype a layer keeps its weights in and computes in (Keras 3's).

`DTypePolicy` (and `FloatDTypePolicy`, its other name) is one policy; `get`
turns a name, a config or None (the global policy) into one, and
`serialize` / `deserialize` write and read it as Keras 3 does. The global
policy is set with `mk.config.set_dtype_policy` (or
`mk.mixed_precision.set_global_policy`). Keras's quantized policies
(`"int8_from_float32"`, ...) are not available.
"""

from minikeras import config
from minikeras.dtype_policies.policy import (
    DTypePolicy,
    FloatDTypePolicy,
    dtype_policy,
)

__all__ = ["DTypePolicy", "FloatDTypePolicy", "deserialize", "get", "serialize"]

_CLASSES = {"DTypePolicy": DTypePolicy, "FloatDTypePolicy": FloatDTypePolicy}


def serialize(dtype_policy):
    """Writes a policy as Keras 3 does: `{"module", "class_name", "config", "registered_name"}`.

    Args:
        dtype_policy: a `DTypePolicy`.

    Returns:
        A JSON-friendly dict (`class_name` is `"DTypePolicy"` for both names).

    Raises:
        TypeError: if `policy` is not a `DTypePolicy`.

    Example:
        >>> mk.dtype_policies.serialize(mk.dtype_policies.DTypePolicy("mixed_float16"))
        {'module': 'keras', 'class_name': 'DTypePolicy', 'config': {'name': 'mixed_float16'}, 'registered_name': None}
    """  # noqa: E501
    if not isinstance(dtype_policy, DTypePolicy):
        raise TypeError(
            f"dtype_policies.serialize: expected a DTypePolicy, got {type(dtype_policy).__name__}"
        )
    return {
        "module": "keras",
        "class_name": "DTypePolicy",
        "config": dtype_policy.get_config(),
        "registered_name": None,
    }


def deserialize(config, custom_objects=None):
    """Reads a policy written by `serialize` (or by Keras 3).

    Args:
        config: a dict with `class_name` `"DTypePolicy"` or `"FloatDTypePolicy"`
            and a `config` holding the name.
        custom_objects: accepted for Keras's signature; unused (no custom
            policies here).

    Returns:
        A `DTypePolicy`.

    Raises:
        ValueError: for any other dict (a quantized policy, say), naming it.

    Example:
        >>> entry = {"class_name": "DTypePolicy", "config": {"name": "float64"}}
        >>> mk.dtype_policies.deserialize(entry)
        <DTypePolicy "float64">
    """
    cls = _CLASSES.get(config.get("class_name")) if isinstance(config, dict) else None
    inner = config.get("config") if cls is not None else None
    if not isinstance(inner, dict):
        raise ValueError(
            f"dtype_policies.deserialize: {config!r:.200} is not a DTypePolicy config "
            "(quantized and other policies are not available in minikeras)"
        )
    return cls.from_config(inner)


def get(identifier):
    """A `DTypePolicy` from a name, a config, a policy, a numpy dtype, or None.

    Args:
        identifier: None (the global policy), a `DTypePolicy` (returned as
            it is), a config dict, a policy name, or a dtype (`np.float64`).

    Returns:
        A `DTypePolicy`.

    Raises:
        ValueError: for anything that names no policy.

    Example:
        >>> mk.dtype_policies.get("mixed_float16").variable_dtype
        'float32'
        >>> mk.dtype_policies.get(None)
        <DTypePolicy "float32">
    """
    if identifier is None:
        return dtype_policy()
    if isinstance(identifier, DTypePolicy):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        return DTypePolicy(identifier)
    try:
        name = config.standardize_dtype(identifier)
    except TypeError:
        raise ValueError(
            "Cannot interpret the dtype argument: expected a string or a DTypePolicy, got "
            f"{identifier!r:.100}"
        ) from None
    return DTypePolicy(name)
