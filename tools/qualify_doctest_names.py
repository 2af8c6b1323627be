"""Rewrites docstring examples to run after only `import numpy as np` and `import minikeras as mk`.

A name an example uses but never defines, and that its module's globals give
it (`Dense`, `ops`, `Tensor`, ...), becomes its public path under `mk`
(`mk.layers.Dense`, `mk.ops`, `mk.Tensor`); `minikeras` becomes `mk`. Names
with no public path are printed for a hand edit. Run from the repository root:

    python tools/qualify_doctest_names.py minikeras
"""

import ast
import builtins
import importlib
import pkgutil
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's minikeras

import minikeras  # noqa: E402

PROMPT = re.compile(r"^(\s*)(>>> |\.\.\. |>>>$|\.\.\.$)")


def public_paths():
    """id(object) -> the shortest `mk.` path to it through public attributes."""
    paths, queue, seen = {}, [("mk", minikeras)], set()
    while queue:
        path, module = queue.pop(0)
        if id(module) in seen:
            continue
        seen.add(id(module))
        names = getattr(module, "__all__", None) or [
            n for n in vars(module) if not n.startswith("_")
        ]
        for name in names:
            value = getattr(module, name, None)
            if value is None:
                continue
            here = f"{path}.{name}"
            if isinstance(value, types.ModuleType):
                if not value.__name__.startswith("minikeras"):
                    continue
                queue.append((here, value))
            if id(value) not in paths or len(here) < len(paths[id(value)]):
                paths[id(value)] = here
    return paths


def internal_paths():
    """id(object) -> `mk.<module>.<name>` for what each minikeras module defines."""
    paths = {}
    for info in pkgutil.walk_packages(minikeras.__path__, "minikeras."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if name.startswith("__") or getattr(value, "__module__", None) != info.name:
                continue
            paths.setdefault(id(value), f"mk.{info.name[len('minikeras.') :]}.{name}")
    return paths


def module_name_of(path):
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def examples_in(lines, start, end):
    """(first line, [(line, prefix length)], code) for each example in lines[start:end]."""
    found, current = [], None
    for index in range(start, end):
        match = PROMPT.match(lines[index])
        if match and match.group(2).startswith(">>>"):
            current = (index, [(index, match.end())])
            found.append(current)
        elif match and current is not None and match.group(2).startswith("..."):
            current[1].append((index, match.end()))
        else:
            current = None
    return [(first, rows, "\n".join(lines[i][p:] for i, p in rows)) for first, rows in found]


def defined_names(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def rewrite_file(path, paths, by_name):
    source = path.read_text()
    lines = source.split("\n")
    module = importlib.import_module(module_name_of(path))
    tree = ast.parse(source)
    unresolved = []
    edits = {}  # line index -> [(column, length, replacement)]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if not isinstance(node.value.value, str) or ">>>" not in node.value.value:
            continue
        examples = examples_in(lines, node.lineno - 1, node.end_lineno)
        parsed = []
        for _first, rows, code in examples:
            try:
                parsed.append((rows, ast.parse(code)))
            except SyntaxError:
                continue
        defined = {"np", "mk"} | set(dir(builtins))
        for _, example in parsed:
            defined |= defined_names(example)
        for rows, example in parsed:
            for name in ast.walk(example):
                if not (isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load)):
                    continue
                if name.id in defined:
                    continue
                if name.id == "minikeras":
                    replacement = "mk"
                else:
                    value = getattr(module, name.id, None)
                    replacement = paths.get(id(value)) if value is not None else None
                    replacement = replacement or by_name.get(name.id)
                if replacement is None:
                    unresolved.append(f"{path}:{rows[0][0] + 1}: {name.id}")
                    continue
                index, prefix = rows[name.lineno - 1]
                text = lines[index][prefix:].encode()
                column = prefix + len(text[: name.col_offset].decode())
                edits.setdefault(index, []).append((column, len(name.id), replacement))
    for index, changes in edits.items():
        line = lines[index]
        for column, length, replacement in sorted(set(changes), reverse=True):
            line = line[:column] + replacement + line[column + length :]
        lines[index] = line
    if edits:
        lines = wrap_long_statements(lines, sorted(edits), path)
        path.write_text("\n".join(lines))
    return len(edits), unresolved


def wrap_long_statements(lines, changed, path, width=100):
    """Reformats each example statement on a changed line that is now too long."""
    starts = set()
    for index in changed:
        if len(lines[index]) > width:
            while not re.match(r"^\s*>>> ", lines[index]):
                index -= 1
            starts.add(index)
    for start in sorted(starts, reverse=True):
        indent = re.match(r"^(\s*)", lines[start]).group(1)
        end = start + 1
        while end < len(lines) and re.match(r"^\s*\.\.\.( |$)", lines[end]):
            end += 1
        code = "\n".join(line.strip()[4:] for line in lines[start:end])
        ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
        result = subprocess.run(
            [ruff, "format", "--line-length", str(width - len(indent) - 4), "-"],
            input=code + "\n",
            capture_output=True,
            text=True,
        )
        formatted = result.stdout.rstrip("\n").split("\n")
        if result.returncode or len(ast.parse(result.stdout).body) != 1:
            print(f"LONG {path}:{start + 1}: reformat by hand")
            continue
        lines[start:end] = [
            indent + (">>> " if number == 0 else "... ") + line if line else indent + "..."
            for number, line in enumerate(formatted)
        ]
    return lines


def main(roots):
    paths = {**internal_paths(), **public_paths()}
    by_name = {}  # a name an example uses without its module having it: `mk.` + the public one
    for path in sorted(public_paths().values(), key=len, reverse=True):
        by_name[path.rpartition(".")[2]] = path
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            changed, unresolved = rewrite_file(path, paths, by_name)
            if changed:
                print(f"{path}: {changed} lines")
            for line in unresolved:
                print("UNRESOLVED", line)


if __name__ == "__main__":
    main(sys.argv[1:] or ["minikeras"])
