"""`DTypePolicy`: the dtypes a layer keeps its weights in and computes in (Keras 3's).

A policy of one dtype (`"float32"`, `"float64"`, `"float16"`) keeps weights
and computes in that dtype. `"mixed_float16"` keeps weights in float32 and
computes in float16: a layer casts its floating inputs to float16 and, inside
its `call`, reads its float weights as float16 (Keras's autocast).
`"mixed_bfloat16"` and `"bfloat16"` are refused: numpy has no bfloat16.

The global policy (`set_dtype_policy`) is what a layer built without a
`dtype` takes. Unset, it is the policy of `config.floatx()`, read afresh each
time (Keras 3 fixes it at its first use).
"""

from minikeras import config

__all__ = ["DTypePolicy", "FloatDTypePolicy", "dtype_policy", "set_dtype_policy"]

_GLOBAL_POLICY = None  # a DTypePolicy once set_dtype_policy is called; None: floatx's
_NO_BFLOAT16 = ("bfloat16", "mixed_bfloat16")


class DTypePolicy:
    """A layer's dtype policy: the dtype of its weights and of its computations.

    Args:
        name: `"mixed_float16"` (float16 computations, float32 weights) or the
            name of a dtype such as `"float32"` (both that dtype). None: the
            global policy's name (`mk.config.dtype_policy()`).

    Raises:
        TypeError: if `name` is not a string.
        ValueError: for a name that is neither a mixed policy nor a dtype, or
            for `"mixed_bfloat16"` and `"bfloat16"` (numpy has no bfloat16;
            Keras supports them).

    Example:
        >>> policy = mk.dtype_policies.DTypePolicy("mixed_float16")
        >>> policy.compute_dtype, policy.variable_dtype
        ('float16', 'float32')
        >>> policy
        <DTypePolicy "mixed_float16">
    """

    def __init__(self, name=None):
        if name is None:
            name = dtype_policy().name
        self._compute_dtype, self._variable_dtype = _parse_name(name)
        self._name = name
        self._quantization_mode = None

    @property
    def name(self):
        """The policy's name, such as `"mixed_float16"`."""
        return self._name

    @property
    def compute_dtype(self):
        """The dtype a layer computes in: its inputs and outputs."""
        return self._compute_dtype

    @property
    def variable_dtype(self):
        """The dtype a layer creates its weights in (unless `add_weight` names one)."""
        return self._variable_dtype

    @property
    def quantization_mode(self):
        """None: minikeras has no quantized policies (Keras's `"int8"`, ...)."""
        return self._quantization_mode

    def get_config(self):
        """The arguments that rebuild the policy.

        Returns:
            `{"name": name}`.

        Example:
            >>> mk.dtype_policies.DTypePolicy("float64").get_config()
            {'name': 'float64'}
        """
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        """Makes a policy from the dict `get_config` returned.

        Args:
            config: the dict.

        Returns:
            A `DTypePolicy`.

        Example:
            >>> mk.dtype_policies.DTypePolicy.from_config({"name": "float16"}).compute_dtype
            'float16'
        """
        return cls(**config)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'

    def __eq__(self, other):
        # As Keras: DTypePolicy and FloatDTypePolicy of one name are equal.
        return isinstance(other, DTypePolicy) and self._name == other._name

    def __hash__(self):
        return hash(self._name)


class FloatDTypePolicy(DTypePolicy):
    """Another name of `DTypePolicy`, as Keras 3 keeps it (files of Keras 3.4 and 3.5).

    Args:
        name: as for `DTypePolicy`.

    Example:
        >>> mk.dtype_policies.FloatDTypePolicy("float32")
        <DTypePolicy "float32">
    """


def _parse_name(name):
    """`(compute_dtype, variable_dtype)` of a policy name (see `DTypePolicy`)."""
    if not isinstance(name, str):
        raise TypeError(
            f"DTypePolicy: 'name' must be a string such as 'mixed_float16' or 'float32', got "
            f"{name!r} of type {type(name).__name__}"
        )
    if name == "mixed_float16":
        return "float16", "float32"
    if name in _NO_BFLOAT16:
        raise ValueError(
            f"DTypePolicy {name!r} is not available in minikeras: numpy has no bfloat16 "
            "(use 'mixed_float16' or 'float32')"
        )
    try:
        dtype = config.standardize_dtype(name)
    except TypeError:
        dtype = None
    if dtype is None or dtype in ("object", "str") or dtype.startswith(("complex", "datetime")):
        raise ValueError(
            f"Cannot convert {name!r} to a DTypePolicy: valid policies are 'mixed_float16' "
            "and the name of a dtype such as 'float32'"
        )
    return dtype, dtype


def set_dtype_policy(policy):
    """Sets the global dtype policy: the one a layer made without a `dtype` takes.

    Also `mk.config.set_dtype_policy` and `mk.mixed_precision.set_global_policy`.
    Layers made before keep their policy.

    Args:
        policy: a policy name (`"mixed_float16"`, `"float32"`, ...) or a `DTypePolicy`.

    Returns:
        None.

    Raises:
        ValueError: for anything else, or a name that is not a policy.

    Example:
        >>> mk.config.set_dtype_policy("mixed_float16")
        >>> mk.layers.Dense(2).compute_dtype
        'float16'
        >>> mk.config.set_dtype_policy("float32")
    """
    global _GLOBAL_POLICY
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    elif not isinstance(policy, DTypePolicy):
        raise ValueError(
            "set_dtype_policy: expected the name of a policy (such as 'mixed_float16') or a "
            f"DTypePolicy, got {policy!r:.100} of type {type(policy).__name__}"
        )
    _GLOBAL_POLICY = policy


def dtype_policy():
    """Returns the global dtype policy (that of `config.floatx()` unless set).

    Also `mk.config.dtype_policy` and `mk.mixed_precision.global_policy`.

    Returns:
        A `DTypePolicy`.

    Example:
        >>> mk.config.dtype_policy()
        <DTypePolicy "float32">
    """
    if _GLOBAL_POLICY is None:
        return DTypePolicy(config.floatx())
    return _GLOBAL_POLICY
