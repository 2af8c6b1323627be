"""Default `get_config()` and `serialize()` of every built-in, against Keras 3.

Initializers, regularizers, constraints, losses, metrics, optimizers and
learning-rate schedules, each made with its defaults (schedules with the
same required arguments), must write the config and the serialized entry
Keras writes (the long form, with `module` and `registered_name`), but for
the differences in `KEPT`, each with its reason. A new difference fails, and
so does a kept one that is gone. Skipped without Keras.
"""

import inspect
import json
import os
import re

import pytest

import minikeras as mk

FAMILIES = (
    ("initializers", "Initializer"),
    ("regularizers", "Regularizer"),
    ("constraints", "Constraint"),
    ("losses", "Loss"),
    ("metrics", "Metric"),
    ("optimizers", "Optimizer"),
)
SCHEDULES = {
    "ExponentialDecay": (0.1, 10, 0.5),
    "InverseTimeDecay": (0.1, 10, 0.5),
    "PiecewiseConstantDecay": ([10], [0.1, 0.01]),
    "PolynomialDecay": (0.1, 10),
    "CosineDecay": (0.1, 10),
    "CosineDecayRestarts": (0.1, 10),
}
_VARIANCE_SCALING = (
    "VarianceScaling", "GlorotNormal", "GlorotUniform", "HeNormal", "HeUniform",
    "LecunNormal", "LecunUniform",
)  # fmt: skip
_AXES = ("input_axes", "output_axes")

# (family.ClassName, config key) -> why our config differs there from Keras 3.15's.
KEPT = {
    # Written only when set: Keras before 3.15 refuses the keys in a config, and None
    # is their default, so leaving them out reads back the same.
    **{
        (f"initializers.{name}", axis): "axes written only when set"
        for name in _VARIANCE_SCALING
        for axis in _AXES
    },  # fmt: skip
    # Keras's Identity has no get_config: a gain other than 1 is lost on its round trip.
    ("initializers.Identity", "gain"): "ours keeps the gain",
    # Keras stores these in a float32 tensor and writes 0.009999999776482582.
    ("regularizers.L1", "l1"): "ours writes the float given (0.01)",
    ("regularizers.OrthogonalRegularizer", "factor"): "ours writes the float given (0.01)",
    # Keras 3.15 drops these arguments from the config (its LossFunctionWrapper subclass
    # pops them or never passes them on): a non-default value is lost on its round trip.
    ("losses.Huber", "delta"): "ours keeps delta",
    ("losses.CosineSimilarity", "axis"): "ours keeps axis",
    ("losses.SparseCategoricalCrossentropy", "axis"): "ours keeps axis",
    ("metrics.CosineSimilarity", "axis"): "ours keeps axis",
    # Keras's BinaryIoU writes dtype 'int32' (its confusion matrix's), though its
    # result is a float; ours writes the result's dtype.
    ("metrics.BinaryIoU", "dtype"): "ours writes the result's dtype",
}
# Keras 3.15 names an optimizer with a process-wide counter on the snake case of its
# class name ('adam', 'adam_1', ..., 'rm_sprop', 'adam_w'); ours is the class name in
# lower case, which the paths of its variables start with. Compared without the name.
OPTIMIZER_NAME = "name"


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _plain(value):
    return json.loads(json.dumps(value, default=repr))


def _pairs(keras):
    """(key, keras object, our object, keras module, our module) for each default built-in."""
    for family, base in FAMILIES:
        theirs_module, ours_module = getattr(keras, family), getattr(mk, family)
        their_base = getattr(theirs_module, base)
        for name in sorted(dir(theirs_module)):
            cls = getattr(theirs_module, name)
            if name == base or not (inspect.isclass(cls) and issubclass(cls, their_base)):
                continue
            ours = getattr(ours_module, name, None)
            if ours is None or cls.__name__ != name:  # not ours; or an alias (GlorotUniform)
                continue
            try:
                their_object = cls()
            except TypeError:  # (required arguments: MeanIoU's num_classes, ...)
                continue
            yield f"{family}.{name}", their_object, ours(), theirs_module, ours_module
    theirs_module, ours_module = keras.optimizers.schedules, mk.optimizers.schedules
    for name, arguments in SCHEDULES.items():
        their_object = getattr(theirs_module, name)(*arguments)
        our_object = getattr(ours_module, name)(*arguments)
        yield f"schedules.{name}", their_object, our_object, theirs_module, ours_module


def _config_differences(key, theirs, ours):
    found = set()
    for name in set(theirs) | set(ours):
        if key.startswith("optimizers.") and name == OPTIMIZER_NAME:
            continue
        their_value, our_value = theirs.get(name, "<absent>"), ours.get(name, "<absent>")
        if name == "name":  # (both number a metric made without a name: auc, auc_1, ...)
            their_value, our_value = (_unnumbered(value) for value in (their_value, our_value))
        if their_value != our_value:
            found.add((key, name))
    return found


def _unnumbered(name):
    return re.sub(r"_\d+$", "", name) if isinstance(name, str) else name


def test_default_configs_and_entries_match_keras():
    keras = _keras()
    found, compared = set(), 0
    for key, their_object, our_object, theirs_module, ours_module in _pairs(keras):
        compared += 1
        their_config, our_config = (_plain(o.get_config()) for o in (their_object, our_object))
        found |= _config_differences(key, their_config, our_config)
        their_entry = _plain(theirs_module.serialize(their_object))
        our_entry = _plain(ours_module.serialize(our_object))
        assert set(our_entry) == {"module", "class_name", "config", "registered_name"}, key
        for field in ("module", "class_name", "registered_name"):
            assert our_entry[field] == their_entry[field], (key, field)
        assert our_entry["config"] == our_config, key
    assert compared > 100  # every family was reached
    unexpected = sorted(found - set(KEPT))
    assert not unexpected, f"new differences from Keras's default configs: {unexpected}"
    stale = sorted(set(KEPT) - found)
    assert not stale, f"kept differences that are gone (remove them from KEPT): {stale}"


def test_long_and_short_entries_both_deserialize():
    cases = [
        (mk.initializers, mk.initializers.HeNormal(seed=3)),
        (mk.regularizers, mk.regularizers.L1L2(0.5, 0.25)),
        (mk.constraints, mk.constraints.MaxNorm(2.0)),
        (mk.losses, mk.losses.Huber(delta=2.0)),
        (mk.metrics, mk.metrics.SparseTopKCategoricalAccuracy(k=2)),
        (mk.optimizers, mk.optimizers.SGD(0.5, momentum=0.25)),
        (mk.optimizers.schedules, mk.optimizers.schedules.CosineDecay(0.1, 10)),
    ]
    for module, made in cases:
        entry = module.serialize(made)
        assert entry["module"].startswith("keras.") and entry["registered_name"] is None
        short = {"class_name": entry["class_name"], "config": entry["config"]}
        for form in (entry, short):
            again = module.deserialize(form)
            assert type(again) is type(made)
            assert again.get_config() == made.get_config()
