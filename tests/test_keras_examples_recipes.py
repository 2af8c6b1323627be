"""Gaps keras-io's examples and recipes (Keras 3 versions) ran into, each reproduced small.

Found by running generative/vae, dcgan_overriding_train_step, vision/autoencoder,
siamese_contrastive, supervised-contrastive-learning, token_learner, the nlp
examples and keras_recipes side by side with Keras 3. Each test is our own
minimal model of what an example does, not the example.
"""

import numpy as np
import pytest

import minikeras as keras


def euclidean_distance(vectors):
    x, y = vectors
    return keras.ops.sqrt(keras.ops.sum(keras.ops.square(x - y), axis=1, keepdims=True))


def _siamese_head(k):
    first, second = k.Input((3,)), k.Input((3,))
    distance = k.layers.Lambda(euclidean_distance, output_shape=(1,))([first, second])
    return k.Model([first, second], distance)


def test_config_of_a_lambda_of_an_unregistered_function_rebuilds_with_custom_objects(tmp_path):
    # siamese_contrastive merges its towers with a Lambda of a plain module-level
    # function; the model's get_config describes it, as Keras's does.
    model = _siamese_head(keras)
    config = model.get_config()
    rebuilt = keras.Model.from_config(
        config, custom_objects={"euclidean_distance": euclidean_distance}
    )
    pair = [np.ones((2, 3), "float32"), np.zeros((2, 3), "float32")]
    np.testing.assert_allclose(
        rebuilt.predict(pair, verbose=0), np.full((2, 1), np.sqrt(3.0)), rtol=1e-6
    )
    again = keras.models.model_from_json(
        model.to_json(), custom_objects={"euclidean_distance": euclidean_distance}
    )
    assert again.layers[2].function is euclidean_distance
    with pytest.raises(ValueError, match="euclidean_distance"):
        keras.Model.from_config(config)  # (found by name only: nothing is imported)
    with pytest.raises(ValueError, match="not registered"):
        model.save(tmp_path / "siamese.keras")  # a file still refuses what it cannot name


def test_config_of_a_lambda_of_an_unregistered_function_matches_keras():
    k = pytest.importorskip("keras")
    theirs = _siamese_head(k).get_config()["layers"][2]["config"]
    ours = _siamese_head(keras).get_config()["layers"][2]["config"]
    assert ours["output_shape"] == tuple(theirs["output_shape"])
    assert theirs["function"]["config"] == ours["function"]["function_name"] == "euclidean_distance"
