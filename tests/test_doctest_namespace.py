"""Docstring examples run after only `import numpy as np` and `import minikeras as mk`.

The root conftest.py starts each doctest from an empty namespace and gives it
exactly those two names, not the globals of the module the docstring is in.
This module's own docstring is a doctest, and checks that:

    >>> sorted(name for name in globals() if not name.startswith("__"))
    ['mk', 'np']
    >>> np.__name__, mk.__name__
    ('numpy', 'minikeras')
"""

import doctest
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_this_module_docstring_is_a_doctest():
    assert len(doctest.DocTestParser().get_examples(__doc__)) == 2


def test_an_example_cannot_use_its_module_globals(tmp_path):
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    (tmp_path / "helper.py").write_text(
        'import numpy as np\n\nHIDDEN = 3\n\n\ndef f():\n    """\n    >>> HIDDEN\n    3\n'
        '    >>> np.zeros(1).shape\n    (1,)\n    """\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--doctest-modules", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert "1 failed" in result.stdout, result.stdout
    assert "NameError: name 'HIDDEN' is not defined" in result.stdout, result.stdout
