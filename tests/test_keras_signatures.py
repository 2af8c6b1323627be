"""Parameter names and defaults of the public callables minikeras shares with Keras 3.

For every name that both `keras.<family>` and `minikeras.<family>` export
(activations, ops, callbacks, metrics, losses, initializers, regularizers,
constraints, optimizers, schedules, saving, tree, utils, models,
dtype_policies, random), each of Keras's named parameters must be one of
ours by the same name with the same default. The differences we keep are
listed in `KEPT` below, each with its reason; a new difference (Keras adds
an argument, or one of ours drifts) fails the test, and so does an entry of
`KEPT` that no longer differs. Parameters our callable takes through
`**kwargs` are listed in `FORWARDED` and checked by calling with Keras's
default. Skipped without Keras.
"""

import inspect
import os

import pytest

import minikeras as mk

FAMILIES = (
    "activations", "ops", "callbacks", "metrics", "losses", "initializers", "regularizers",
    "constraints", "optimizers", "optimizers.schedules", "saving", "tree", "utils", "models",
    "dtype_policies", "random",
)  # fmt: skip

_OPTIMIZER_COMMON = (
    "weight_decay", "clipnorm", "clipvalue", "global_clipnorm", "use_ema", "ema_momentum",
    "ema_overwrite_frequency", "loss_scale_factor", "gradient_accumulation_steps", "name",
)  # fmt: skip
_OPTIMIZERS = (
    "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "Ftrl", "Lamb", "Lion",
    "Muon", "Nadam", "RMSprop", "SGD", "ScheduleFreeAdamW",
)  # fmt: skip

# Taken through `**kwargs` and passed on to a base class that names them: checked by
# calling the callable with each at Keras's default (see test_forwarded_arguments_are_taken).
FORWARDED = {
    **{
        f"optimizers.{name}": tuple(
            # AdamW and Muon name weight_decay themselves (a different default).
            a
            for a in _OPTIMIZER_COMMON
            if not (name in ("AdamW", "Muon") and a == "weight_decay")
        )
        for name in _OPTIMIZERS
    },
}

# (family.name, "parameter" or "parameter=default") -> why we keep the difference.
KEPT = {
    # Sparse and ragged tensors do not exist in minikeras.
    ("ops.convert_to_tensor", "sparse"): "no sparse tensors",
    ("ops.convert_to_tensor", "ragged"): "no ragged tensors",
    ("ops.one_hot", "sparse"): "no sparse tensors",
}


def _keras():
    os.environ.setdefault("KERAS_BACKEND", "jax")
    return pytest.importorskip("keras")


def _get(module, path):
    for part in path.split("."):
        module = getattr(module, part, None)
    return module


def _same_default(a, b):
    if a is b:
        return True
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 (an array default, say)
        return False


def differences(keras):
    """Every (family.name, parameter or parameter=default) where we differ from Keras."""
    found = set()
    for family in FAMILIES:
        theirs_module, ours_module = _get(keras, family), _get(mk, family)
        shared = set(dir(theirs_module)) & set(dir(ours_module))
        for name in sorted(n for n in shared if not n.startswith("_")):
            theirs, ours = getattr(theirs_module, name), getattr(ours_module, name)
            if not callable(theirs) or inspect.ismodule(theirs):
                continue
            try:
                their_parameters = inspect.signature(theirs).parameters.values()
                our_parameters = inspect.signature(ours).parameters
            except (TypeError, ValueError):
                continue
            for parameter in their_parameters:
                if parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
                    continue
                ours_parameter = our_parameters.get(parameter.name)
                key = f"{family}.{name}"
                if ours_parameter is None or ours_parameter.kind in (
                    ours_parameter.VAR_KEYWORD,
                    ours_parameter.VAR_POSITIONAL,
                ):
                    found.add((key, parameter.name))
                elif not _same_default(parameter.default, ours_parameter.default):
                    found.add((key, f"{parameter.name}={parameter.default!r}"))
    return found


def test_signatures_match_keras_but_for_the_kept_differences():
    keras = _keras()
    found = differences(keras)
    forwarded = {(key, name) for key, names in FORWARDED.items() for name in names}
    unexpected = sorted(found - set(KEPT) - forwarded)
    assert not unexpected, f"new differences from Keras's signatures: {unexpected}"
    stale = sorted((set(KEPT) | forwarded) - found)
    assert not stale, f"listed differences that are gone (remove them from the lists): {stale}"


@pytest.mark.parametrize("key", sorted(FORWARDED))
def test_forwarded_arguments_are_taken(key):
    keras = _keras()
    family, _, name = key.rpartition(".")
    theirs, ours = getattr(_get(keras, family), name), getattr(_get(mk, family), name)
    defaults = inspect.signature(theirs).parameters
    arguments = {a: defaults[a].default for a in FORWARDED[key]}
    arguments["name"] = "forwarded"
    made = ours(**arguments)
    assert made.name == "forwarded"
    for argument, value in arguments.items():
        assert getattr(made, argument) == value, argument
