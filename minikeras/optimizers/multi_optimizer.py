"""`MultiOptimizer` and `OptimizerMap`: a different optimizer for different variables.

`OptimizerMap` maps variable paths (exact, or regular expressions matched in
full) to optimizers, with a default; `MultiOptimizer` builds each optimizer
on its share of the variables and hands each update's gradients to their
owners, as Keras 3 does.
"""

import re
from collections.abc import MutableMapping

import numpy as np

from minikeras import serialization_lib
from minikeras.engine.context import TRACING
from minikeras.engine.context import state as _state
from minikeras.engine.tensor import note_effect
from minikeras.optimizers._apply import label
from minikeras.optimizers.base import Optimizer
from minikeras.optimizers.loss_scale_optimizer import LossScaleOptimizer

__all__ = ["MultiOptimizer", "OptimizerMap"]


def _check_inner(optimizer, where):
    if not isinstance(optimizer, Optimizer):
        raise ValueError(f"{where}: expected an Optimizer, got {optimizer!r}")
    if isinstance(optimizer, MultiOptimizer):
        raise ValueError(f"{where}: a MultiOptimizer cannot be inside a MultiOptimizer")
    if isinstance(optimizer, LossScaleOptimizer):
        raise ValueError(f"{where}: a LossScaleOptimizer cannot be inside a MultiOptimizer")
    return optimizer


class OptimizerMap(MutableMapping):
    """Variable paths to optimizers: an exact path, or a regular expression the path fully matches.

    A lookup tries the exact key first, then every key as a pattern
    (`re.fullmatch`), and gives `default_optimizer` when none matches; so
    `"encoder/.*"` covers every variable under `encoder`, while `"encoder"`
    covers only a variable of that exact path. Calling the map on a variable
    looks up its `path` (minikeras's paths are `"layer_name/weight_name"`,
    without the `"sequential/"` Keras puts before a `Sequential`'s layers;
    a variable made outside a layer has its name as path).

    Args:
        default_optimizer: the `Optimizer` for variables no key matches.
        optimizer_map: None, or a dict of path or pattern -> `Optimizer`.

    Raises:
        TypeError: if `default_optimizer` is not an `Optimizer` or
            `optimizer_map` is not a dict.
        ValueError: (lookup) if a path matches more than one pattern;
            (setting) for a key already there, a key that is not a string, or
            a value that is not an `Optimizer` or is a `MultiOptimizer`.

    Example:
        >>> optimizers = mk.optimizers
        >>> mapping = optimizers.OptimizerMap(optimizers.SGD(), {"encoder/.*": optimizers.Adam()})
        >>> mapping["encoder/dense/kernel"].name, mapping["head/kernel"].name
        ('adam', 'sgd')
    """

    def __init__(self, default_optimizer, optimizer_map=None):
        if not isinstance(default_optimizer, Optimizer):
            raise TypeError(
                f"OptimizerMap: `default_optimizer` must be an Optimizer, got {default_optimizer!r}"
            )
        if optimizer_map is not None and not isinstance(optimizer_map, dict):
            raise TypeError(f"OptimizerMap: `optimizer_map` must be a dict, got {optimizer_map!r}")
        self._default_optimizer = default_optimizer
        self._optimizer_map = {}
        for key, optimizer in (optimizer_map or {}).items():
            self[key] = optimizer

    @property
    def default_optimizer(self):
        """The `Optimizer` of the variables no key matches."""
        return self._default_optimizer

    def __getitem__(self, key):
        if key in self._optimizer_map:
            return self._optimizer_map[key]
        matches = [pattern for pattern in self._optimizer_map if re.fullmatch(pattern, key)]
        if len(matches) > 1:
            raise ValueError(
                f"OptimizerMap: variable {key!r} matches more than one pattern: {matches}"
            )
        return self._optimizer_map[matches[0]] if matches else self._default_optimizer

    def __setitem__(self, key, optimizer):
        if key in self._optimizer_map:
            raise ValueError(f"OptimizerMap: the key {key!r} is already in the map")
        if not isinstance(key, str):
            raise ValueError(f"OptimizerMap: a key must be a string, got {key!r}")
        self._optimizer_map[key] = _check_inner(optimizer, f"OptimizerMap[{key!r}]")

    def __delitem__(self, key):
        del self._optimizer_map[key]

    def __len__(self):
        return len(self._optimizer_map)

    def __iter__(self):
        return iter(self._optimizer_map)

    def __call__(self, variable):
        """The optimizer of `variable`: the lookup of its path (its name, without one)."""
        return self[variable.path or variable.name]

    def get_config(self):
        """Returns the default optimizer and the map, serialized, for `from_config`.

        Returns:
            A dict.

        Example:
            >>> optimizers = mk.optimizers
            >>> mapping = optimizers.OptimizerMap(optimizers.SGD(), {"b.*": optimizers.Adam()})
            >>> config = mapping.get_config()
            >>> config["default_optimizer"]["class_name"], list(config["optimizer_map"])
            ('SGD', ['b.*'])
        """
        return {
            "default_optimizer": serialization_lib.serialize_keras_object(self._default_optimizer),
            "optimizer_map": {
                key: serialization_lib.serialize_keras_object(optimizer)
                for key, optimizer in self._optimizer_map.items()
            },
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Makes an `OptimizerMap` (with new optimizers) from `get_config`'s dict.

        Args:
            config: the dict `get_config` returned.
            custom_objects: optional dict of name -> class, for custom optimizers.

        Returns:
            An `OptimizerMap`.

        Example:
            >>> optimizers = mk.optimizers
            >>> mapping = optimizers.OptimizerMap(optimizers.SGD(), {"b.*": optimizers.Adam()})
            >>> again = mk.optimizers.OptimizerMap.from_config(mapping.get_config())
            >>> again["bias"].name, again["kernel"].name
            ('adam', 'sgd')
        """
        load = lambda item: serialization_lib.deserialize_keras_object(item, custom_objects)  # noqa: E731
        mapping = {key: load(item) for key, item in (config.get("optimizer_map") or {}).items()}
        return cls(load(config["default_optimizer"]), mapping)


class MultiOptimizer(Optimizer):
    """Updates each variable with its own optimizer, chosen by an `OptimizerMap` or a function.

    The first `apply` (or `build`) asks `optimizer_map(variable)` for each
    variable's optimizer and builds each on its share; each update then hands
    every optimizer its variables' gradients, and adds 1 to this optimizer's
    `iterations` (each inner optimizer counts its own). `optimizers` lists
    the inner optimizers (the map's values, then its default, then any other
    the function gave); `variables` are this optimizer's `iterations` and
    learning rate (unused, as in Keras) followed by each inner optimizer's.
    As in Keras, there is no `learning_rate` here (read or set it on the
    inner optimizers), so callbacks that change the learning rate do not
    apply; `loss_scale_factor` is accepted as None only.

    Args:
        optimizer_map: an `OptimizerMap`, or a function of a `Variable`
            returning its `Optimizer` (the same instance for variables that
            share one).
        loss_scale_factor: None (minikeras does not scale losses).
        name: the name (default `"multi_optimizer"`).

    Raises:
        ValueError: if `loss_scale_factor` is not None; (`build`) if the map
            gives something that is not an `Optimizer`, or a `MultiOptimizer`;
            (`apply`) as `Optimizer.apply` does.
        AttributeError: on reading or setting `learning_rate`.

    Example:
        >>> optimizers = mk.optimizers
        >>> kernel, bias = mk.Variable([1.0], name="kernel"), mk.Variable([1.0], name="bias")
        >>> mapping = optimizers.OptimizerMap(optimizers.SGD(0.5), {"bias": optimizers.SGD(0.1)})
        >>> optimizer = optimizers.MultiOptimizer(mapping)
        >>> optimizer.apply([np.ones(1), np.ones(1)], [kernel, bias])
        >>> kernel.numpy(), bias.numpy()  # 1 - 0.5, and 1 - 0.1
        (array([0.5], dtype=float32), array([0.9], dtype=float32))
    """

    def __init__(self, optimizer_map, loss_scale_factor=None, name=None):
        if loss_scale_factor is not None:
            raise ValueError(
                "MultiOptimizer: minikeras does not scale losses; `loss_scale_factor` must be "
                f"None, got {loss_scale_factor!r}"
            )
        if not callable(optimizer_map):
            raise ValueError(
                "MultiOptimizer: `optimizer_map` must be an OptimizerMap or a function of a "
                f"variable, got {optimizer_map!r}"
            )
        self._inner_optimizers = None  # (None while the base's __init__ sets the rate)
        super().__init__(0.0, name=name or "multi_optimizer")
        self.loss_scale_factor = None
        self._optimizer_map = optimizer_map
        self._inner_optimizers = []
        for optimizer in [*getattr(optimizer_map, "values", list)(),
                          getattr(optimizer_map, "default_optimizer", None)]:  # fmt: skip
            if optimizer is not None and optimizer not in self._inner_optimizers:
                self._inner_optimizers.append(optimizer)
        self._owner_of = {}  # id(variable) -> index in `optimizers`

    @property
    def optimizers(self):
        """The inner optimizers, a list."""
        return list(self._inner_optimizers)

    @property
    def variables(self):
        own = super().variables
        return own + [v for optimizer in self._inner_optimizers for v in optimizer.variables]

    @property
    def learning_rate(self):
        raise AttributeError(
            "MultiOptimizer has no learning rate; read it on its inner optimizers "
            "(`optimizer.optimizers`)"
        )

    @learning_rate.setter
    def learning_rate(self, value):
        if self._inner_optimizers is None:  # (the base's __init__: the unused rate)
            Optimizer.learning_rate.fset(self, value)
            return
        raise AttributeError(
            "MultiOptimizer has no learning rate; set it on its inner optimizers "
            "(`optimizer.optimizers`)"
        )

    def build(self, variables):
        variables = list(variables)
        owners = []
        for variable in variables:
            optimizer = _check_inner(
                self._optimizer_map(variable), f"MultiOptimizer, variable {label(variable)!r}"
            )
            if optimizer not in self._inner_optimizers:
                self._inner_optimizers.append(optimizer)
            owners.append(self._inner_optimizers.index(optimizer))
        super().build(variables)
        self._owner_of = {id(v): owner for v, owner in zip(variables, owners)}
        for index, optimizer in enumerate(self._inner_optimizers):
            share = [v for v, owner in zip(variables, owners) if owner == index]
            if share:
                optimizer.build(share)

    def __setstate__(self, state):
        super().__setstate__(state)
        if self.built:  # (its keys are the originals' ids; its values follow their order)
            owners = list(state["_owner_of"].values())
            self._owner_of = {id(v): owner for v, owner in zip(self._trainable_variables, owners)}

    def apply(self, grads, trainable_variables=None):
        if TRACING[0] and _state.effect_observers:
            note_effect(f"an update by optimizer {self.name!r}")
        grads = list(grads)
        if trainable_variables is None:
            if not self.built:
                raise ValueError(
                    f"Optimizer {self.name!r}: pass the variables to its first apply (or build it)"
                )
            trainable_variables = self._trainable_variables
        trainable_variables = list(trainable_variables)
        if len(grads) != len(trainable_variables):
            raise ValueError(
                f"Optimizer {self.name!r}: {len(grads)} gradients for "
                f"{len(trainable_variables)} variables"
            )
        if not self.built:
            self.build(trainable_variables)
        shares = [([], []) for _ in self._inner_optimizers]
        for grad, variable in zip(grads, trainable_variables):  # all checked before any update
            if id(variable) not in self._owner_of:
                raise ValueError(
                    f"Optimizer {self.name!r}: variable {label(variable)!r} is not one it was "
                    "built for"
                )
            if grad is not None and tuple(np.shape(grad)) != tuple(variable.shape):
                raise ValueError(
                    f"Optimizer {self.name!r}: the gradient of {label(variable)!r} has shape "
                    f"{tuple(np.shape(grad))}, the variable {tuple(variable.shape)}"
                )
            share = shares[self._owner_of[id(variable)]]
            share[0].append(grad)
            share[1].append(variable)
        for optimizer, (share_grads, share_variables) in zip(self._inner_optimizers, shares):
            if share_variables:
                optimizer.apply(share_grads, share_variables)
        self._iterations.assign_add(1)

    def finalize_variable_values(self, var_list):
        for index, optimizer in enumerate(self._inner_optimizers):
            share = [v for v in var_list if self._owner_of.get(id(v)) == index]
            if share:
                optimizer.finalize_variable_values(share)

    def get_config(self):
        return {
            "optimizer_map": serialization_lib.serialize_keras_object(self._optimizer_map),
            "loss_scale_factor": None,
            "name": self.name,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if "optimizer_map" not in config:
            raise ValueError(
                "MultiOptimizer: its config has no `optimizer_map` (it cannot be made from "
                "its name alone)"
            )
        config["optimizer_map"] = serialization_lib.deserialize_keras_object(
            config["optimizer_map"], custom_objects
        )
        return cls(**config)

    def __repr__(self):
        inner = ", ".join(optimizer.name for optimizer in self._inner_optimizers)
        return (
            f"<MultiOptimizer {self.name!r} optimizers=[{inner}] "
            f"iterations={int(self._iterations._value)}>"
        )
