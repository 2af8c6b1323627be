"""Writing Keras 3's `.keras` and `.weights.h5` files (see `minikeras.saving.keras_file`).

The config in Keras 3's entry shape with its `compile_config`, every variable
at the path `keras_layout` gives, and minikeras's own record of the model
(for a bit-exact resume) in a member Keras ignores; written atomically.
"""

import io
import json
import os
import warnings
import zipfile

import numpy as np

from minikeras.layers import operation_node
from minikeras.layers.operation_specs import KERAS_OPERATION_SPECS
from minikeras.saving import (
    keras_assets,
    keras_layout,
    keras_ops,
    keras_optimizer_layout,
    keras_order,
    sharing,
)

__all__ = [
    "KERAS_FORMAT_VERSION",
    "MINIKERAS_MEMBER",
    "keras_weights_bytes",
    "save_keras_model",
    "save_keras_weights",
]

# The Keras release whose `.keras` layout minikeras writes (metadata.json's keras_version).
KERAS_FORMAT_VERSION = "3.5.0"
# The member that holds minikeras's own record (see `save_keras_model`); Keras ignores it.
MINIKERAS_MEMBER = "minikeras/model.minikeras"


def _h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError(
            "reading and writing Keras files needs h5py: pip install h5py (minikeras lists "
            "it as a dependency; it is missing from this environment)"
        ) from None
    return h5py


def _overrides(layer, hook):
    """Whether a layer's class writes its own `save_own_variables` / `load_own_variables`."""
    from minikeras.layers.layer_weights import LayerWeights

    return layer is not None and getattr(type(layer), hook) is not getattr(LayerWeights, hook)


def keras_weights_bytes(model, optimizer=None):
    """The bytes of a `model.weights.h5` holding `model`'s weights in Keras's layout.

    Args:
        model: a built model.
        optimizer: a built optimizer whose variables go to `optimizer/vars`.

    Returns:
        The HDF5 file's bytes.

    Raises:
        ValueError: if a weight has no place in Keras's layout, or the
            optimizer is of a kind whose Keras layout is not known.

    Example:
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> mk.saving.keras_file.keras_weights_bytes(model)[:4]
        b'\\x89HDF'
    """
    h5py = _h5py()
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as file:
        for path, variables, layer in keras_layout.layer_groups(model):
            group = file.require_group(path)
            if _overrides(layer, "save_own_variables"):  # the layer's own hook writes its group
                store = {}
                layer.save_own_variables(store)
                for key, value in store.items():
                    group.create_dataset(str(key), data=np.asarray(value))
                continue
            for index, variable in enumerate(variables):
                group.create_dataset(str(index), data=variable.numpy())
        if optimizer is not None:
            group = file.require_group("optimizer/vars")
            order = keras_order.trainable_order(model, optimizer._trainable_variables)
            variables = keras_optimizer_layout.optimizer_variables(optimizer, order)
            for index, variable in enumerate(variables):
                group.create_dataset(str(index), data=np.asarray(variable.numpy()))
            inner = getattr(optimizer, "inner_optimizer", None)
            if inner is not None:  # (a LossScaleOptimizer: Keras writes the inner's group too)
                group = file.require_group("optimizer/inner_optimizer/vars")
                variables = keras_optimizer_layout.optimizer_variables(inner, order)
                for index, variable in enumerate(variables):
                    group.create_dataset(str(index), data=np.asarray(variable.numpy()))
    return buffer.getvalue()


def save_keras_weights(model, path, overwrite=True):
    """Writes `model`'s weights as Keras's `.weights.h5` (what `keras.Model.load_weights` reads).

    Args:
        model: a built model.
        path: the file, ending in `.weights.h5`.
        overwrite: if False, an existing file is an error.

    Returns:
        None.

    Raises:
        ValueError: if the model is not built, or a weight has no place in Keras's layout.
        FileExistsError: if the file exists and `overwrite` is False.

    Example:
        >>> import tempfile, pathlib
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> mk.saving.keras_file.save_keras_weights(model, pathlib.Path(tempfile.mkdtemp()) / "w.weights.h5")
    """  # noqa: E501
    from minikeras.saving.archive import atomic_write

    if not model.built:
        raise ValueError(f"save_weights: '{model.name}' is not built yet, so it has no weights")
    data = keras_weights_bytes(model)
    atomic_write(path, lambda stream: stream.write(data), overwrite=overwrite)


def _compile_config(model):
    from minikeras.saving.keras_config import compile_flags, keyed_by_output
    from minikeras.saving.saved_training_state import _compile_entries, _map_leaves

    if not getattr(model, "compiled", False):
        return None
    entries = _compile_entries(model)

    def metric_entry(entry):
        # The metric that "accuracy" became is written as the name Keras reads.
        if isinstance(entry, dict) and entry.get("config", {}).get("name") == "accuracy":
            entry = "accuracy"
        return _keras_entry(entry, "keras.metrics")

    # A list per output of a dict of outputs is written keyed by name.
    entries = keyed_by_output(entries, getattr(model, "_outputs", None))
    given = getattr(model, "_compile_arguments", None)
    if given is not None and _holds_a_function(given):
        # A plain function is written as Keras's function entry, which Keras finds again
        # (the resolved entries name it bare, which only minikeras reads back).
        config = model.get_compile_config()
        loss, metrics, weighted = config["loss"], config["metrics"], config["weighted_metrics"]
    else:
        weighted = entries["weighted_metrics"]
        loss = _map_leaves(lambda e: _keras_entry(e, "keras.losses"), entries["loss"])
        metrics = _map_leaves(metric_entry, entries["metrics"]) or None
        weighted = None if weighted is None else _map_leaves(metric_entry, weighted)
    return {
        "optimizer": _optimizer_entry(model.optimizer),
        "loss": loss,
        "loss_weights": entries["loss_weights"],
        "metrics": metrics,
        "weighted_metrics": weighted,
        "steps_per_execution": model.steps_per_execution,
        # Keras compiles with XLA where the model allows ("auto"), as minikeras replays.
        **compile_flags(model.run_eagerly, model.jit_compile),
    }


def _holds_a_function(given):
    """Whether compile's loss or metrics, as given, hold a plain function (not a Loss or Metric)."""
    from minikeras.losses import Loss
    from minikeras.metrics.base import Metric
    from minikeras.tree import flatten

    leaves = flatten([given["loss"], given["metrics"], given["weighted_metrics"]])
    return any(callable(leaf) and not isinstance(leaf, (Loss, Metric, type)) for leaf in leaves)


def _optimizer_entry(optimizer):
    """The optimizer's entry for Keras; a learning-rate schedule in it named as Keras names one."""
    from minikeras import optimizers

    entry = _keras_entry(optimizers.serialize(optimizer), "keras.optimizers")
    rate = entry.get("config", {}).get("learning_rate")
    if isinstance(rate, dict):
        config = {
            **entry["config"],
            "learning_rate": _keras_entry(rate, "keras.optimizers.schedules"),
        }
        entry = {**entry, "config": config}
    return entry


def _keras_entry(entry, module):
    """A family's older `{"class_name", "config"}` entry with Keras's module and registry keys."""
    if isinstance(entry, dict) and "class_name" in entry and "module" not in entry:
        return {"module": module, **entry, "registered_name": entry.get("registered_name")}
    return entry


def _keras_models(entry):
    """A model's entry, and those of the models nested in it, under Keras's class names:
    a model built from inputs and outputs is a `Functional` there, not a `Model`, an
    operation node (`keras_ops`) is in the Keras module that defines it, and a Lambda's
    function is named as Keras names one."""
    from minikeras.saving.functions import _is_function_reference, keras_function_entry
    from minikeras.saving.registry import custom_objects_by_name

    if isinstance(entry, list):
        return [_keras_models(item) for item in entry]
    if not isinstance(entry, dict):
        return entry
    if _is_function_reference(entry):  # (a Lambda's function)
        return keras_function_entry(entry, custom_objects_by_name())
    entry = {key: _keras_models(value) for key, value in entry.items()}
    operation = keras_ops.KERAS_OPERATIONS.get(entry.get("class_name"))
    if operation is not None and entry.get("module") == keras_ops.__name__:
        entry.update(module=operation.keras_module, registered_name=entry["class_name"])
    elif entry.get("module") == operation_node.__name__:
        entry.update(module=_keras_operation_module(entry), registered_name=entry["class_name"])
    elif entry.get("class_name") == "Sequential" and entry.get("module") == "keras.models":
        entry["module"], entry["registered_name"] = "keras", None
    elif (
        entry.get("class_name") == "Model"
        and entry.get("module") == "keras.models"
        and "layers" in (entry.get("config") or {})
    ):
        entry.update(module="keras.src.models.functional", class_name="Functional",
                     registered_name="Functional")  # fmt: skip
    return entry


def _keras_operation_module(entry):
    """The Keras module of an op node's class (`keras.src.ops.numpy`); refuses an op Keras
    has no operation for (`ops.dense`, `ops.lstm`...), naming it."""
    cls = operation_node.operation_class(entry.get("registered_name"))
    spec = KERAS_OPERATION_SPECS.get(cls.function_name) if cls is not None else None
    if spec is None:
        name = (entry.get("config") or {}).get("name", "?")
        function = cls.function_name if cls is not None else entry.get("class_name")
        raise ValueError(
            f"save: the node '{name}' is minikeras.ops.{function} on symbolic tensors, which "
            "Keras has no operation for, so a .keras file cannot hold it: compute it in a "
            "Lambda layer (of a named, registered function) or a custom layer, or save the "
            "model as .minikeras"
        )
    return spec[0]


def save_keras_model(model, path, overwrite=True):
    """Writes a model as a Keras 3 `.keras` file, which `keras.saving.load_model` reads.

    The zip holds what Keras reads (`metadata.json`, `config.json` with the
    model's entry, `build_config` and `compile_config`, and
    `model.weights.h5` with the optimizer's state too), and, in the member
    `minikeras/model.minikeras`, minikeras's own record of the same model
    (its weights by tracked path, the training state and the random
    generators' states), from which minikeras resumes training bit-exactly.
    Keras ignores that member. The write is atomic.

    Args:
        model: a built functional, Sequential or registered model.
        path: the file, ending in `.keras`.
        overwrite: if False, an existing file is an error.

    Returns:
        None.

    Raises:
        ValueError: if the model is not built or cannot be rebuilt from its config.
        FileExistsError: if the file exists and `overwrite` is False.

    Example:
        >>> import tempfile, pathlib
        >>> model = mk.Sequential([mk.Input((3,)), mk.layers.Dense(2)])
        >>> mk.saving.keras_file.save_keras_model(model, pathlib.Path(tempfile.mkdtemp()) / "m.keras")
    """  # noqa: E501
    import datetime
    import tempfile

    from minikeras import __version__
    from minikeras.saving.archive import atomic_write
    from minikeras.saving.archive_writer import to_json
    from minikeras.saving.model_io import save_model
    from minikeras.saving.registry import serialize_layer

    if not model.built:
        raise ValueError(f"save: model '{model.name}' is not built yet; call it on data first")
    with sharing.sharing_scope():
        entry = _keras_models(serialize_layer(model))
    shared = sharing.shared_layers(entry)
    if shared:  # (minikeras reads the file back; Keras does not)
        warnings.warn(
            f"save: one layer is held by several models of '{path}': {'; '.join(shared)}. "
            f"{sharing.KERAS_CANNOT} minikeras loads it, with the layer shared; for Keras, "
            "save the weights (model.save_weights('model.weights.h5')) and load them into "
            "the model built in code",
            UserWarning,
            stacklevel=4,  # (model.save -> save_model -> here)
        )
    compile_config = _compile_config(model)
    if compile_config is not None:
        try:
            to_json(compile_config, "the compile config")
        except (TypeError, ValueError):  # (a plain callable learning rate: no JSON of it)
            compile_config = None  # the file loads uncompiled, as the warning above says
    if compile_config is not None:
        entry["compile_config"] = compile_config
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and not optimizer.built:
        optimizer = None
    weights = keras_weights_bytes(model, optimizer)
    assets = keras_assets.asset_members(model)  # (layers' save_assets, before the file is touched)
    with tempfile.TemporaryDirectory() as folder:
        own = os.path.join(folder, "model.minikeras")
        save_model(model, own)
        with open(own, "rb") as stream:
            record = stream.read()
    metadata = {
        "keras_version": KERAS_FORMAT_VERSION,
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
        "minikeras_version": __version__,
    }

    # (Encoded before the file is touched; numpy scalars in a config become numbers.)
    config = to_json(entry, "the model's config")

    def write(stream):
        with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("metadata.json", json.dumps(metadata))
            archive.writestr("config.json", config)
            archive.writestr("model.weights.h5", weights)
            for name, data in assets.items():
                archive.writestr(name, data)
            # Stored, not deflated: it is a zip already, and a stored member cannot inflate.
            archive.writestr(MINIKERAS_MEMBER, record, compress_type=zipfile.ZIP_STORED)

    atomic_write(path, write, overwrite=overwrite)
