"""Gaps keras-io's vision examples (Keras 3 versions) ran into, each reproduced small.

Each test is our own minimal model of what an example does, not the example.
"""

import numpy as np

import minikeras as keras


def test_compute_loss_override_without_training_argument():
    # The knowledge-distillation example overrides compute_loss with the
    # signature Keras had before 3.3; fit and evaluate call it without `training`.
    class Scaled(keras.Model):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
            return 3.0 * keras.ops.mean(keras.ops.square(y - y_pred))

    inputs = keras.Input((2,))
    model = Scaled(inputs, keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
    model.compile(keras.optimizers.SGD(0.0), metrics=["mae"], report_unchanged=False)
    x, y = np.ones((4, 2), "float32"), np.full((4, 1), 2.0, "float32")
    history = model.fit(x, y, epochs=1, verbose=0).history
    assert history["loss"] == [12.0] and history["mae"] == [2.0]
    assert model.evaluate(x, y, verbose=0) == [12.0, 2.0]
