"""What `import minikeras` leaves for later: `mk.applications` until it is used.

Run in fresh interpreters, since this test process has imported everything.
"""

import subprocess
import sys


def run(script):
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_applications_are_imported_when_first_used():
    out = run(
        "import sys, minikeras as mk\n"
        "print('minikeras.applications' in sys.modules)\n"
        "builder = mk.applications.MobileNetV2\n"
        "from minikeras import applications\n"
        "print('minikeras.applications' in sys.modules, applications is mk.applications)\n"
    )
    assert out == ["False", "True", "True"]


def test_a_file_with_an_applications_layer_loads_in_a_fresh_process(tmp_path):
    # ConvNeXt's LayerScale lives in minikeras.applications.convnext: loading finds it
    # by its module, which is imported then.
    path = tmp_path / "scaled.keras"
    run(
        "import numpy as np, minikeras as mk\n"
        "from minikeras.applications.convnext import LayerScale\n"
        "x = mk.Input((4,))\n"
        "model = mk.Model(x, LayerScale(0.5, 4)(mk.layers.Dense(4)(x)))\n"
        f"model.save({str(path)!r})\n"
    )
    out = run(
        "import sys, numpy as np, minikeras as mk\n"
        f"model = mk.saving.load_model({str(path)!r})\n"
        "print(type(model.layers[-1]).__name__, model(np.ones((1, 4))).shape)\n"
    )
    assert out == ["LayerScale", "(1,", "4)"]
