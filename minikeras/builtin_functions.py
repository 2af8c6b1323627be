"""minikeras's own functions, found by the `(module, name)` a config names them by.

A config names a module-level function by module and name: a `Lambda`'s
(`{"module": "minikeras.ops", "function_name": "relu"}`), its `output_shape`
or `mask`. minikeras's own are found by their public name in their package
(`minikeras.ops` or `minikeras.activations`), whatever module of the package
the config names: a config written before a function moved (`minikeras.ops.nn.erf`,
from before `ops.nn` became Keras's namespace) still finds it. Nothing is
imported, so a config naming another module runs no code.
"""

__all__ = ["builtin_function"]


def builtin_function(module, name):
    """The function of minikeras (or numpy's ufunc) that `module` and `name` stand for, or None.

    Args:
        module: the module a config names (`"minikeras.ops.activation_functions"`,
            `"minikeras.ops"`, `"numpy"`, ...).
        name: the function's name (a plain name: None for a dotted one).

    Returns:
        The public function of `minikeras.ops` (or `minikeras.ops.image`) or
        `minikeras.activations` of that name if `module` is in that package;
        numpy's ufunc of that name for `"numpy"`; else None.

    Example:
        >>> from minikeras.builtin_functions import builtin_function
        >>> builtin_function("minikeras.ops.linalg", "matmul") is mk.ops.matmul
        True
        >>> builtin_function("my_project.layers", "matmul") is None
        True
    """
    import numpy as np

    from minikeras import activations, ops

    if not isinstance(module, str) or not isinstance(name, str) or "." in name:
        return None
    if module == "numpy":
        candidate = getattr(np, name, None)
        return candidate if isinstance(candidate, np.ufunc) else None
    # Found by its public name in the package, as classes are by family: a file
    # written before the function moved to another module of the package still loads.
    # (`ops.image`'s functions, as all ops, say they are `minikeras.ops`'s)
    for package, home in ((ops, ops), (ops.image, ops), (activations, activations)):
        if _within(module, home.__name__) and name in package.__all__:
            candidate = getattr(package, name, None)
            if (
                callable(candidate)
                and _within(getattr(candidate, "__module__", None) or "", home.__name__)
                and getattr(candidate, "__qualname__", None) == name
            ):
                return candidate
    return None


def _within(module, package):
    return module == package or module.startswith(package + ".")
