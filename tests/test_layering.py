"""The package's import graph flows one way, and every module declares `__all__`.

Layers, lowest first: engine <- ops <- layers <- models <- trainers <- saving <-
applications (ready-made models, built from layers and models, loading weights)
and wrappers (scikit-learn estimators around models).
A module may import (at module level) from its own layer and the ones below;
optimizers, losses, metrics, callbacks, random, utils and datasets import no
layers, models, trainers or saving. Only the engine and the ops that define
primitives import autograd. Imports inside functions are not checked: they
are the sanctioned way to reach up for something needed only at call time.
"""

import ast
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "minikeras"

# Rank of each layer; a module imports only from ranks at or below its own.
RANKS = {
    "engine": 0,
    "ops": 1,
    "layers": 2,
    "models": 3,
    "trainer": 4,
    "trainers": 4,
    "saving": 5,
    "applications": 6,
    "wrappers": 6,
}
# Packages beside the stack that must not import anything from layers up.
NO_LAYERS = {"optimizers", "losses", "metrics", "callbacks", "random", "utils", "datasets"}
UPPER = {"layers", "models", "trainer", "trainers", "saving", "applications", "wrappers"}

# Back edges that exist today in packages this test's author does not own.
# Each entry is (importing module, imported module); the owners empty this
# list. Do not add to it: fix the import (move the import into the function
# that needs it, or move the shared name down).
ALLOWED_BACK_EDGES = set()
# Modules outside engine/ and the primitive-defining ops that import autograd
# today (owners: move the autograd use into ops).
ALLOWED_AUTOGRAD = set()


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        yield name, path


def _imports(name, path):
    """The modules `name` imports at module level (including `from X import Y` as X.Y)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def _top(module):
    """The first component under minikeras (`ops` for `minikeras.ops.nn`), or None."""
    parts = module.split(".")
    return parts[1] if parts[0] == "minikeras" and len(parts) > 1 else None


def _defines_primitives(path):
    source = path.read_text()
    return any(word in source for word in ("@primitive", "@fused_primitive", "defvjp"))


def _back_edges():
    edges = set()
    for name, path in _modules():
        own = _top(name)
        for imported in _imports(name, path):
            target = _top(imported)
            if target is None or target == own:
                continue
            too_high = own in RANKS and target in RANKS and RANKS[target] > RANKS[own]
            if too_high or (own in NO_LAYERS and target in UPPER):
                edges.add((name, f"minikeras.{target}"))
    return edges


def test_the_import_graph_has_no_back_edges():
    unexpected = _back_edges() - ALLOWED_BACK_EDGES
    listing = "\n".join(f"{source} -> {target}" for source, target in sorted(unexpected))
    assert not unexpected, "back edges in the import graph:\n" + listing


def test_the_allow_list_holds_only_edges_that_still_exist():
    stale = ALLOWED_BACK_EDGES - _back_edges()
    assert not stale, f"fixed, remove from ALLOWED_BACK_EDGES: {sorted(stale)}"


def test_the_checker_sees_a_back_edge(tmp_path, monkeypatch):
    fake = tmp_path / "minikeras"
    (fake / "ops").mkdir(parents=True)
    (fake / "ops" / "bad.py").write_text("from minikeras.layers import Dense\n")
    (fake / "engine").mkdir()
    (fake / "engine" / "tape.py").write_text("def f():\n    from minikeras import ops\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert _back_edges() == {("minikeras.ops.bad", "minikeras.layers")}


def test_only_the_engine_and_primitive_defining_ops_import_autograd():
    offenders = set()
    for name, path in _modules():
        if not any(module.split(".")[0] == "autograd" for module in _imports(name, path)):
            continue
        top = _top(name)
        if top == "engine" or (top == "ops" and _defines_primitives(path)):
            continue
        offenders.add(name)
    assert offenders == ALLOWED_AUTOGRAD, f"import autograd outside the engine: {sorted(offenders)}"


@pytest.mark.parametrize("name", [name for name, _ in _modules()])
def test_every_module_declares_all(name):
    module = importlib.import_module(name)
    assert isinstance(getattr(module, "__all__", None), (list, tuple)), f"{name} has no __all__"
    missing = [item for item in module.__all__ if not hasattr(module, item)]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"
