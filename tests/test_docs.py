"""Every guide's code blocks run, in order, so they cannot go stale.

The blocks of a page share one namespace, as a reader working down the page
would, except that a block which imports minikeras itself starts afresh: it
claims to stand on its own, and must. The README's blocks run too.
"""

import importlib.util
import re
import warnings
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
IMPORTS_MINIKERAS = re.compile(r"^import minikeras\b", re.MULTILINE)
PAGES = sorted(p for p in DOCS.glob("*.md") if BLOCK.search(p.read_text()))
PAGES.append(DOCS.parent / "README.md")


def test_the_guides_have_code():
    assert {p.name for p in PAGES} >= {
        "README.md", "index.md", "math.md", "getting-started.md", "engine.md", "layers.md",
        "tracking.md", "training.md", "custom-training-loops.md", "saving.md",
        "coming-from-keras-pytorch.md",
    }  # fmt: skip


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_guide_code_blocks_run(page, capsys):
    namespace = {"__name__": f"docs_{page.stem}"}
    with warnings.catch_warnings():
        # The tracking guide shows warnings on purpose; each block asserts on them itself.
        warnings.simplefilter("ignore")
        for number, block in enumerate(BLOCK.findall(page.read_text()), start=1):
            if IMPORTS_MINIKERAS.search(block):  # standalone: nothing from the blocks before
                namespace = {"__name__": f"docs_{page.stem}"}
            if "import keras" in block and importlib.util.find_spec("keras") is None:
                pytest.skip(f"{page.name}: block {number} on needs Keras, not installed here")
            if "from sklearn" in block and importlib.util.find_spec("sklearn") is None:
                pytest.skip(f"{page.name}: block {number} on needs scikit-learn, not installed")
            try:
                exec(compile(block, f"{page.name} block {number}", "exec"), namespace)
            except Exception as error:
                pytest.fail(f"{page.name}, code block {number} failed: {error!r}\n{block}")
