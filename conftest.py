"""Doctests run as a user's script would: after only `import numpy as np` and
`import minikeras as mk`.

pytest runs a module's doctests in a copy of that module's globals, so an
example could use a name its module imports but a user never would. Each
doctest here starts from an empty namespace instead, and `doctest_namespace`
gives it exactly `np` and `mk`.
"""

import os

# One BLAS thread, set before numpy loads: on a shared 2-core machine a busy
# second core makes multi-threaded small matrix products 10-100x slower.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from _pytest.doctest import DoctestItem  # noqa: E402

import minikeras  # noqa: E402


def pytest_collection_modifyitems(items):
    for item in items:
        if isinstance(item, DoctestItem):
            item.dtest.globs = {"__name__": "__main__"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield
    if isinstance(item, DoctestItem):  # pytest's own helper, which no user has
        item.dtest.globs.pop("getfixture", None)


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    doctest_namespace.update(np=np, mk=minikeras)


@pytest.fixture(autouse=True)
def _channels_last_after_each_test():
    # A test or example that sets the global image layout must not leak it into the next.
    yield
    minikeras.config.set_image_data_format("channels_last")


@pytest.fixture(autouse=True)
def _restore_dtype_policy():
    # A test (or doctest) that sets the global dtype policy leaves the next one the
    # default (floatx's policy, read afresh), whatever it did.
    yield
    from minikeras.dtype_policies import policy

    policy._GLOBAL_POLICY = None
