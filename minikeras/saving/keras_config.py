"""Reading Keras 3 configs: the entries of a Keras `config.json`, made fit for minikeras.

Keras writes every object as `{"module", "class_name", "config",
"registered_name"}`, which minikeras reads as it is (see
`minikeras.serialization_lib`). What differs is inside the configs:

- a dtype is a `DTypePolicy` entry; minikeras takes its name (`"float32"`);
- Keras layers take options minikeras does not have (`quantization_config`,
  `lora_rank`, BatchNormalization's `renorm`, ...). Each is dropped when it
  holds Keras's default, which changes nothing; any other value is an error
  that names the class and the option, since minikeras would build something
  else than the file describes.

Nothing here imports a module named in a file.
"""

import inspect
import re

from minikeras import serialization_lib
from minikeras.layers import operation_node
from minikeras.saving import keras_ops
from minikeras.trainers.compile_outputs import output_names

__all__ = [
    "KerasConfigError",
    "clean_entry",
    "compile_arguments",
    "compile_flags",
    "keyed_by_output",
]

# Keras-only options, and the values that mean "not used" (None and False always do).
_DEFAULTS = {
    "renorm_momentum": (0.99,),
    "ema_momentum": (0.99,),
    "jit_compile": (True, False, "auto"),
    "run_eagerly": (False, True),  # (compiled or eager, a minikeras step computes the same)
    "reduction": ("sum_over_batch_size",),
    "use_cudnn": ("auto",),
    "data_format": ("channels_last",),
}
# What Layer's **kwargs take besides its named arguments.
_LAYER_KEYWORDS = {"input_shape", "input_dim", "batch_input_shape", "activity_regularizer"}
# Options Keras writes that say nothing about the object (dropped whatever they hold).
_IGNORED = {"shared_object_id", "build_input_shape"}


# Keras on torch writes its optimizers from their backend's module
# (`keras.src.backend.torch.optimizers.torch_adam`): the same optimizer, variables and all.
_BACKEND_OPTIMIZER = re.compile(r"keras\.src\.backend\.\w+\.optimizers(\.|$)")


class KerasConfigError(ValueError):
    """A Keras config names a class or an option minikeras does not have."""


def _is_entry(value):
    return (
        isinstance(value, dict) and isinstance(value.get("class_name"), str) and ("config" in value)
    )


def _accepted(cls):
    """The keyword arguments `cls` takes, or None if it takes any (`**kwargs` all the way)."""
    names = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        parameters = inspect.signature(init).parameters.values()
        names.update(p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
        if klass.__name__ == "Layer" and klass.__module__ == "minikeras.layers.layer":
            return names | _LAYER_KEYWORDS  # Layer checks its **kwargs itself
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            return names
    return names


def _unused(key, value):
    return value is None or value is False or value in _DEFAULTS.get(key, ())


def clean_entry(value, where="config.json"):
    """A Keras config value with every entry made fit for minikeras (see the module).

    Args:
        value: an entry, a config, or any value inside one.
        where: what to name in errors (the file).

    Returns:
        The same structure, cleaned (a new object: `value` is not changed).

    Raises:
        KerasConfigError: for a class minikeras lacks, or an option set to a
            value minikeras cannot honour; the message names both.

    Example:
        >>> entry = {"module": "keras.layers", "class_name": "Dense", "registered_name": None,
        ...          "config": {"units": 2, "quantization_config": None,
        ...                     "dtype": {"module": "keras", "class_name": "DTypePolicy",
        ...                               "config": {"name": "float32"}}}}
        >>> mk.saving.keras_config.clean_entry(entry)["config"]
        {'units': 2, 'dtype': 'float32'}
    """
    if isinstance(value, list):
        return [clean_entry(item, where) for item in value]
    if not isinstance(value, dict):
        return value
    if not _is_entry(value):
        return {key: clean_entry(item, where) for key, item in value.items()}
    class_name = value["class_name"]
    if class_name in ("DTypePolicy", "FloatDTypePolicy"):  # (Keras 3's two names of it)
        config = value.get("config") or {}
        return config.get("name", "float32")
    if class_name.startswith("__"):  # tensors, tuples, arrays: read as they are
        return value
    module = value.get("module")
    if isinstance(module, str) and module.startswith("keras.src.ops."):
        return _operation_entry(value, where)
    if isinstance(module, str) and _BACKEND_OPTIMIZER.match(module):
        value = {**value, "module": "keras.optimizers"}  # Keras's own class, per backend
    entry = {key: clean_entry(item, where) for key, item in value.items() if key not in _IGNORED}
    if isinstance(entry.get("inbound_nodes"), list):
        entry["inbound_nodes"] = [_inherited_masks(node) for node in entry["inbound_nodes"]]
    config = entry.get("config")
    if not isinstance(config, dict):
        return entry
    config = entry["config"] = {k: v for k, v in config.items() if k not in _IGNORED}
    cls = _class_of(value)
    if cls is None:
        return entry  # a registered or custom class: found (or refused) when it is made
    accepted = _accepted(cls)
    if accepted is None:
        return entry
    cleaned = {}
    for key, item in config.items():
        if key in accepted or key in _IGNORED:
            if key not in _IGNORED:
                cleaned[key] = item
        elif not _unused(key, item):
            raise KerasConfigError(
                f"{where}: {class_name} '{config.get('name', '?')}' sets the Keras option "
                f"{key}={item!r:.80}, which minikeras's {class_name} does not have; minikeras "
                "would build something else than the file describes"
            )
    entry["config"] = cleaned
    return entry


def _inherited_masks(node):
    """A functional node without the `mask: None` Keras writes where the call took its
    input's own mask (a nested model's output mask, say): to Keras, None there is "the
    input's mask", which minikeras reads as no `mask` argument at all."""
    kwargs = node.get("kwargs") if isinstance(node, dict) else None
    if not isinstance(kwargs, dict):
        return node
    kept = {
        key: value
        for key, value in kwargs.items()
        if not (value is None and (key == "mask" or key.endswith("_mask")))
    }
    return {**node, "kwargs": kept}


def _operation_entry(entry, where):
    """A Keras operation node (`keras.src.ops.numpy.NotEqual`) as the minikeras class for it."""
    class_name = entry["class_name"]
    own = operation_node.keras_operation_class(entry.get("module"), class_name)
    if class_name not in keras_ops.KERAS_OPERATIONS and own is not None:
        return {  # an op on symbolic tensors, as minikeras.ops records it
            **{key: item for key, item in entry.items() if key not in _IGNORED},
            "module": operation_node.__name__,
            "registered_name": f"{operation_node.PACKAGE}>{class_name}",
        }
    if class_name not in keras_ops.KERAS_OPERATIONS:
        config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
        raise KerasConfigError(
            f"{where}: the node '{config.get('name', '?')}' is the Keras operation "
            f"{entry['module']}.{class_name}, which minikeras cannot replay (it replays "
            f"{sorted(set(keras_ops.KERAS_OPERATIONS) | operation_node.keras_class_names())}); "
            "build that part of the model with layers"
        )
    return {
        **{key: item for key, item in entry.items() if key not in _IGNORED},
        "module": keras_ops.__name__,
        "registered_name": f"{keras_ops.PACKAGE}>{class_name}",
    }


def _class_of(entry):
    """The minikeras built-in an entry names, None for custom classes; raises for unknown ones."""
    class_name, module = entry["class_name"], entry.get("module")
    registered = entry.get("registered_name")
    if class_name in ("function", "InputLayer", "Functional", "Sequential", "Model"):
        return None
    if registered and registered not in (class_name, "function") or module is None:
        return None  # custom: the registry or custom_objects find it
    if not (isinstance(module, str) and module.split(".")[0] == "keras"):
        return None
    found = serialization_lib.builtin_object(module, class_name)
    if found is None:
        raise KerasConfigError(
            f"the file uses {module}.{class_name}, which minikeras does not have (yet); "
            "open an issue, or rebuild that part of the model with what minikeras has"
        )
    return found if inspect.isclass(found) else None


def compile_arguments(compile_config, where="config.json"):
    """The arguments of `model.compile` that a Keras `compile_config` describes.

    Args:
        compile_config: the dict Keras writes beside the model's config.
        where: what to name in errors (the file).

    Returns:
        A dict with `optimizer`, `loss`, `metrics`, `loss_weights` and
        `weighted_metrics` (entries cleaned, not yet made into objects).

    Raises:
        KerasConfigError: for an option minikeras cannot honour.

    Example:
        >>> mk.saving.keras_config.compile_arguments({"optimizer": "adam", "loss": "mse",
        ...     "metrics": None, "run_eagerly": False, "jit_compile": True})
        {'optimizer': 'adam', 'loss': 'mse', 'metrics': None, 'loss_weights': None, 'weighted_metrics': None}
    """  # noqa: E501
    if not isinstance(compile_config, dict):
        raise KerasConfigError(
            f"{where}: compile_config must be a dict, got {compile_config!r:.80}"
        )
    arguments = {}
    for key in ("optimizer", "loss", "metrics", "loss_weights", "weighted_metrics"):
        arguments[key] = clean_entry(compile_config.get(key), where)
    for key, value in compile_config.items():
        if key == "steps_per_execution":
            continue  # compile takes any (and runs one step per batch whatever it is)
        if key not in arguments and not _unused(key, value):
            raise KerasConfigError(
                f"{where}: compile_config sets {key}={value!r:.80}, which minikeras's compile "
                "does not honour"
            )
    return arguments


def keyed_by_output(arguments, outputs):
    """Compile arguments given as lists, one entry per output, keyed by output name when
    the model's outputs are a dict: Keras (and minikeras) take such a list by sorted key.

    Args:
        arguments: a dict of `loss`, `loss_weights`, `metrics` and `weighted_metrics`
            (other keys are passed through).
        outputs: the model's outputs (a dict of them, or anything else).

    Returns:
        A new dict of the arguments.

    Example:
        >>> mk.saving.keras_config.keyed_by_output(
        ...     {"loss": ["mse", "mae"], "loss_weights": None}, {"zeta": 0, "alpha": 1})
        {'loss': {'alpha': 'mse', 'zeta': 'mae'}, 'loss_weights': None}
    """
    names = output_names(None, outputs) if isinstance(outputs, dict) else None
    per_output = ("loss", "loss_weights", "metrics", "weighted_metrics")
    return {
        key: dict(zip(names, value))
        if key in per_output and names and isinstance(value, list) and len(value) == len(names)
        else value
        for key, value in arguments.items()
    }


def compile_flags(run_eagerly=False, jit_compile="auto"):
    """`run_eagerly` and `jit_compile` as a file keeps them and `compile` takes them back.

    `run_eagerly` is True only if given True; `jit_compile` is True, False or
    `"auto"`, which anything else a file holds reads as (a compiled and an
    eager minikeras step compute the same numbers). A file written before
    the flags were kept gives the defaults.

    Args:
        run_eagerly: what compile was given, or what a file holds.
        jit_compile: likewise.

    Returns:
        A dict with the two keys.

    Example:
        >>> mk.saving.keras_config.compile_flags(True, "xla")
        {'run_eagerly': True, 'jit_compile': 'auto'}
    """
    return {
        "run_eagerly": run_eagerly is True,
        "jit_compile": jit_compile if jit_compile is True or jit_compile is False else "auto",
    }
