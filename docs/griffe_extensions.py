"""A griffe extension for the API reference: our `Example:` sections are examples.

minikeras's docstrings follow Keras and title their doctests `Example:`.
griffe's Google-style parser knows only the plural, `Examples:`, and renders
the singular as an admonition of Markdown text, which mangles the `>>>` lines.
This renames the section in the text griffe parses; the source is untouched.
"""

import re

import griffe

EXAMPLE_TITLE = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Reads a docstring's `Example:` section as `Examples:`."""

    def on_object(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = EXAMPLE_TITLE.sub(r"\1Examples:", obj.docstring.value)


class PublicBases(griffe.Extension):
    """Shows a class's public ancestry: a private base is replaced by its own bases.

    `Adam(_MomentEstimator)` is listed as based on `Optimizer`, the base a reader
    can look up; the private class is an implementation detail of its module.
    """

    def on_package(self, *, pkg, **kwargs):
        for cls in _classes(pkg):
            cls.bases = _public_bases(cls, cls.bases)


def _classes(obj):
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_class:
            yield member
        if member.is_module or member.is_class:
            yield from _classes(member)


def _public_bases(cls, bases, depth=0):
    public = []
    for base in bases:
        name = str(base).rpartition(".")[2]
        private = cls.parent.members.get(name) if name.startswith("_") else None
        if private is not None and private.is_alias:  # imported from its own module
            try:
                private = private.final_target
            except griffe.AliasResolutionError:
                private = None
        if private is not None and private.is_class and depth < 10:
            public += _public_bases(private, private.bases, depth + 1)
        else:
            public.append(base)
    return public
