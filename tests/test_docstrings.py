"""Every public name has a docstring the API reference is built from, and is in it.

The names are those exported from `minikeras` and its public submodules (their
`__all__`, or else the public functions and classes they define), and the
public methods of the public classes. Each needs a docstring with:

- an `Example:` holding at least one `>>>` line (the doctests run them);
- `Args:` naming every argument it takes, one entry each, and nothing it does
  not take (a class may leave the arguments it passes on to a base class to
  that class's docstring; with `**kwargs`, extra entries are allowed);
- `Returns:` if its body returns a value.

A method that overrides one of a minikeras base class is documented once, on
the base class, where it is checked. Properties need a docstring.

The API reference (docs/api/**/*.md, built by `mkdocs build --strict`) must
render every module listed here, every public name, and every base class that
is not exported but gives exported classes their arguments or methods.
"""

import ast
import importlib
import inspect
import re
import textwrap
import types
from pathlib import Path

import minikeras

API_PAGES = Path(__file__).resolve().parent.parent / "docs" / "api"

MODULES = [
    "minikeras",
    "minikeras.activations",
    "minikeras.applications",
    "minikeras.applications.convnext",
    "minikeras.applications.densenet",
    "minikeras.applications.efficientnet",
    "minikeras.applications.efficientnet_v2",
    "minikeras.applications.imagenet_utils",
    "minikeras.applications.inception_resnet_v2",
    "minikeras.applications.inception_v3",
    "minikeras.applications.mobilenet",
    "minikeras.applications.mobilenet_v2",
    "minikeras.applications.mobilenet_v3",
    "minikeras.applications.nasnet",
    "minikeras.applications.resnet",
    "minikeras.applications.resnet50",
    "minikeras.applications.resnet_v2",
    "minikeras.applications.vgg16",
    "minikeras.applications.vgg19",
    "minikeras.applications.xception",
    "minikeras.backend",
    "minikeras.callbacks",
    "minikeras.config",
    "minikeras.constraints",
    "minikeras.datasets",
    "minikeras.datasets.digits",
    "minikeras.datasets.fashion_mnist",
    "minikeras.datasets.mnist",
    "minikeras.engine",
    "minikeras.initializers",
    "minikeras.layers",
    "minikeras.losses",
    "minikeras.metrics",
    "minikeras.models",
    "minikeras.ops",
    "minikeras.ops.image",
    "minikeras.optimizers",
    "minikeras.random",
    "minikeras.regularizers",
    "minikeras.saving",
    "minikeras.optimizers.schedules",
    "minikeras.tree",
    "minikeras.utils",
    "minikeras.wrappers",
]

ARGS = re.compile(r"^([ \t]*)Args:[ \t]*$", re.MULTILINE)
ARGUMENT = re.compile(r"^\s*\**(\w+)(\s*\([^)]*\))?:(\s|$)")  # `name:` or `name (type):`
DIRECTIVE = re.compile(r"^::: ([\w.]+)\n((?:[ \t]+.*\n)*)", re.MULTILINE)  # with its options


def public_names(module):
    """`__all__`, or else the public functions and classes the module defines."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == module.__name__
    ]


def public_classes_and_functions():
    """(qualified name, object) for every public name, each object once."""
    seen = set()
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in public_names(module):
            value = getattr(module, name)
            if isinstance(value, types.ModuleType) or id(value) in seen:
                continue
            seen.add(id(value))
            yield f"{module_name}.{name}", value


def minikeras_bases(cls):
    return [base for base in cls.__mro__[1:] if base.__module__.startswith("minikeras")]


def is_override(cls, name):
    return any(name in vars(base) for base in minikeras_bases(cls))


# ------------------------------------------------------------------ docstrings


def has_section(doc, title):
    return re.search(rf"^\s*{title}:\s*$", doc, re.MULTILINE) is not None


def has_example(doc):
    match = re.search(r"^\s*Examples?:\s*$", doc, re.MULTILINE)
    return match is not None and ">>>" in doc[match.end() :]


def documented_arguments(doc):
    """(the names an `Args:` section documents, its entries that are not `name: text`)."""
    match = ARGS.search(doc or "")
    if match is None:
        return set(), []
    names, malformed, entry_indent = set(), [], None
    for line in doc[match.end() :].splitlines()[1:]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= len(match.group(1)):
            break  # the next section
        entry_indent = indent if entry_indent is None else entry_indent
        if indent == entry_indent:  # deeper lines continue an entry
            entry = ARGUMENT.match(line)
            if entry:
                names.add(entry.group(1))
            else:
                malformed.append(line.strip())
    return names, malformed


def parameters_of(function):
    """(named parameters besides self and cls, names of *args and **kwargs, takes **kwargs)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a class with a builtin __init__, such as an exception
        return [], [], False
    starred = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    named = [p.name for p in parameters if p.name not in ("self", "cls") and p.kind not in starred]
    stars = [p.name for p in parameters if p.kind in starred]
    return named, stars, any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters)


def returns_a_value(function):
    """Whether the function's own body has `return <value>` or `yield`."""
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(function)))
    except (OSError, TypeError):
        return False

    def returns(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue  # a nested function's returns are its own
            if isinstance(child, (ast.Yield, ast.YieldFrom)):
                return True
            value = child.value if isinstance(child, ast.Return) else None
            if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
                return True
            if returns(child):
                return True
        return False

    return returns(ast.parse(source).body[0])


def problems_of(function, doc, *, returns, documented_elsewhere=(), skip_kwargs=False):
    """What `doc` misses, as the documentation of `function` (or of a class's constructor)."""
    if not doc or not doc.strip():
        return ["no docstring"]
    named, stars, takes_kwargs = parameters_of(function)
    counted_stars = [] if skip_kwargs else stars
    problems = []
    if (named or counted_stars) and not has_section(doc, "Args"):
        problems.append("no Args:")
    elif has_section(doc, "Args"):
        documented, malformed = documented_arguments(doc)
        problems += [f"Args: entry {line!r} is not 'name: description'" for line in malformed]
        problems += [
            f"argument '{name}' is not in Args:"
            for name in named
            if name not in documented and name not in documented_elsewhere
        ]
        if not takes_kwargs:
            problems += [
                f"Args: documents '{name}', which it does not take"
                for name in sorted(documented - set(named) - set(stars))
            ]
    if returns and not has_section(doc, "Returns"):
        problems.append("no Returns:")
    if not has_example(doc):
        problems.append("no Example: with >>>")
    return problems


def check_function(function):
    return problems_of(function, function.__doc__, returns=returns_a_value(function))


def check_class(cls):
    in_bases = set()
    for base in minikeras_bases(cls):
        in_bases |= documented_arguments(base.__doc__)[0]
    doc = cls.__dict__.get("__doc__")
    return problems_of(cls, doc, returns=False, documented_elsewhere=in_bases, skip_kwargs=True)


def check_members(cls):
    """(qualified name, problems) for the public methods and properties `cls` defines."""
    for name, member in vars(cls).items():
        if name.startswith("_") or is_override(cls, name):
            continue
        where = f"{cls.__module__}.{cls.__qualname__}.{name}"
        if isinstance(member, property):
            yield where, [] if (member.__doc__ or "").strip() else ["no docstring"]
        elif isinstance(member, (classmethod, staticmethod)):
            yield where, check_function(member.__func__)
        elif inspect.isfunction(member):
            yield where, check_function(member)


def all_problems():
    problems, classes = [], []
    for where, value in public_classes_and_functions():
        if inspect.isclass(value):
            classes.append(value)
            problems += [f"{where}: {problem}" for problem in check_class(value)]
        elif callable(value):
            problems += [f"{where}: {problem}" for problem in check_function(value)]
    seen = set()
    for cls in classes:  # their methods, and those of the minikeras classes they inherit from
        for owner in [cls, *minikeras_bases(cls)]:
            if owner not in seen:
                seen.add(owner)
                for where, found in check_members(owner):
                    problems += [f"{where}: {problem}" for problem in found]
    return problems


def test_the_checker_finds_the_names():
    names = dict(public_classes_and_functions())
    assert names["minikeras.layers.Dense"] is minikeras.layers.Dense
    assert names["minikeras.activations.relu"] is minikeras.activations.relu
    assert names["minikeras.ops.matmul"] is minikeras.ops.matmul
    assert len(names) > 250


def test_the_checker_sees_a_bad_docstring():
    def scale(x, factor, **kwargs):
        """Scales x.

        Args:
            x, factor: numbers.
            offset: a number.
        """
        return x * factor

    assert check_function(scale) == [
        "Args: entry 'x, factor: numbers.' is not 'name: description'",
        "argument 'x' is not in Args:",
        "argument 'factor' is not in Args:",
        "no Returns:",
        "no Example: with >>>",
    ]


def test_every_public_name_has_a_complete_docstring():
    problems = all_problems()
    assert not problems, f"{len(problems)} docstring problems:\n" + "\n".join(problems)


# --------------------------------------------------------------- the API pages


def rendered_objects():
    """Ids of the objects docs/api/*.md render: `::: module` renders its public names too."""
    rendered = set()
    for page in API_PAGES.rglob("*.md"):
        for path, options in DIRECTIVE.findall(page.read_text()):
            try:
                value = importlib.import_module(path)
            except ImportError:
                module_name, _, name = path.rpartition(".")
                value = getattr(importlib.import_module(module_name), name)
            rendered.add(id(value))
            if isinstance(value, types.ModuleType) and "members: false" not in options:
                rendered.update(id(getattr(value, name)) for name in public_names(value))
    return rendered


def test_the_api_reference_renders_every_public_name_and_base_class():
    rendered = rendered_objects()
    missing = {name: "" for name in MODULES if id(importlib.import_module(name)) not in rendered}
    for where, value in public_classes_and_functions():
        if id(value) not in rendered:
            missing[where] = ""
        for base in minikeras_bases(value) if inspect.isclass(value) else []:
            path = f"{base.__module__}.{base.__qualname__}"
            if not base.__name__.startswith("_") and id(base) not in rendered:
                missing.setdefault(path, f" (a base of {where})")
            elif base.__name__.startswith("_") and list(check_members(base)):
                missing.setdefault(path, f" (a private base of {where}, with public methods)")
    lines = [path + why for path, why in sorted(missing.items())]
    how = "add a `::: path` line; a layer goes on its family's page in docs/api/layers/"
    assert not lines, f"Not in docs/api/**/*.md ({how}):\n" + "\n".join(lines)


def test_the_top_level_page_lists_every_top_level_name():
    page = (API_PAGES / "minikeras.md").read_text()
    missing = [name for name in minikeras.__all__ if f"`{name}`" not in page]
    assert not missing, f"docs/api/minikeras.md does not list {missing}"


def test_every_layer_documents_its_input_and_output_shapes():
    """Each layer `minikeras.layers` exports has `Input shape:` and `Output shape:`, as Keras's do.

    The layer's own docstring needs them (not a base class's): they are what
    its reference entry shows. `Layer` itself, whose shapes are its
    subclass's, is exempt.
    """
    missing = []
    for name in minikeras.layers.__all__:
        value = getattr(minikeras.layers, name)
        if (
            inspect.isclass(value)
            and issubclass(value, minikeras.Layer)
            and value is not minikeras.Layer
        ):
            doc = value.__dict__.get("__doc__") or ""
            missing += [
                f"minikeras.layers.{name}: no {title}:"
                for title in ("Input shape", "Output shape")
                if not has_section(doc, title)
            ]
    assert not missing, "\n".join(missing)
