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
