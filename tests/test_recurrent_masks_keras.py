"""Recurrent layers' masks as Keras 3.15 propagates them: which mask a call applies,
which outputs carry one, and `Bidirectional.compute_mask` with `return_state`.

By hand first: given initial states, Keras does not apply the sequences' own mask
(it fills a call's `mask` from its inputs only when the call has one tensor
argument), though the outputs still carry it; `mask=` given explicitly applies.
Then outputs, states and output masks of `SimpleRNN`, `LSTM`, `GRU`, `RNN(cell)`,
stacked cells and `Bidirectional` against `keras` itself on embedded, padded
tokens (skipped when it is not importable).
"""

import itertools
import warnings

import numpy as np
import pytest

import minikeras as mk

TOKENS = np.array([[3, 1, 4, 0, 0], [5, 6, 7, 8, 2], [0, 0, 2, 4, 6]])  # padding right, left
PADDING = TOKENS != 0
rng = np.random.default_rng(9)
STATE = rng.standard_normal((3, 3)).astype("float32")


def _embedding(lib):
    embedding = lib.layers.Embedding(9, 4, mask_zero=True)
    embedding.build(None)
    return embedding


def _mask_of(tensor):
    mask = getattr(tensor, "_keras_mask", None)
    return None if mask is None else np.asarray(getattr(mask, "numpy", lambda: mask)())


@pytest.mark.parametrize("kind", ["GRU", "SimpleRNN"])
@pytest.mark.filterwarnings("ignore:.*sequences carry a mask:UserWarning")
def test_initial_states_keep_the_sequences_mask_off_the_steps_but_on_the_outputs(kind):
    embedding = _embedding(mk)
    layer = getattr(mk.layers, kind)(3, return_sequences=True, return_state=True)
    vectors = embedding(TOKENS).numpy()  # the same numbers, carrying no mask
    unmasked = layer(vectors, initial_state=[STATE])
    masked = layer(vectors, initial_state=[STATE], mask=PADDING)
    outputs, state = layer(embedding(TOKENS), initial_state=[STATE])
    np.testing.assert_allclose(outputs.numpy(), unmasked[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(state.numpy(), unmasked[1].numpy(), rtol=1e-6)
    assert not np.allclose(outputs.numpy(), masked[0].numpy())  # the mask changes them
    np.testing.assert_array_equal(_mask_of(outputs), PADDING)  # yet the outputs carry it
    assert _mask_of(state) is None
    # Given as mask=, it applies.
    explicit = layer(embedding(TOKENS), initial_state=[STATE], mask=PADDING)
    np.testing.assert_allclose(explicit[0].numpy(), masked[0].numpy(), rtol=1e-6)


@pytest.mark.filterwarnings("ignore:.*sequences carry a mask:UserWarning")
def test_a_functional_model_with_initial_states_does_as_the_eager_call():
    embedding = _embedding(mk)
    tokens, state = mk.Input((5,), dtype="int32"), mk.Input((3,))
    layer = mk.layers.Bidirectional(mk.layers.GRU(3, return_sequences=True))
    model = mk.Model([tokens, state], layer(embedding(tokens), initial_state=[state, state]))
    unmasked = layer(embedding(TOKENS).numpy(), initial_state=[STATE, STATE])
    np.testing.assert_allclose(model([TOKENS, STATE]).numpy(), unmasked.numpy(), rtol=1e-6)
    masked = layer(embedding(TOKENS), initial_state=[STATE, STATE], mask=PADDING)
    assert not np.allclose(masked.numpy(), unmasked.numpy())


def test_bidirectional_compute_mask_with_states_is_kerass():
    mask = PADDING
    for merge_mode, sequences in itertools.product(["concat", None], [False, True]):
        layer = mk.layers.Bidirectional(
            mk.layers.LSTM(2, return_sequences=sequences, return_state=True), merge_mode
        )
        got = layer.compute_mask(None, mask)
        output_mask = mask if sequences else None
        if merge_mode is None:  # a pair, and no entry for the four states
            assert len(got) == 2 and all(m is output_mask for m in got)
        else:
            assert got is output_mask
    stateful = mk.layers.Bidirectional(
        mk.layers.GRU(2, return_sequences=True, return_state=True, stateful=True)
    )
    stateful(np.ones((3, 5, 4), "float32"))
    assert stateful.compute_mask(None, mask)[1:] == [None, None]  # (Keras fails here)


# ---------------------------------------------------------------- against Keras 3


def _layers(lib):
    """(name, maker of a layer for return_sequences, return_state) for each architecture."""
    layers = lib.layers
    return [
        ("SimpleRNN", lambda s, r: layers.SimpleRNN(3, return_sequences=s, return_state=r)),
        ("LSTM", lambda s, r: layers.LSTM(3, return_sequences=s, return_state=r)),
        ("GRU back", lambda s, r: layers.GRU(3, return_sequences=s, return_state=r,
                                             go_backwards=True)),
        ("RNN(LSTMCell)", lambda s, r: layers.RNN(layers.LSTMCell(3), return_sequences=s,
                                                  return_state=r)),
        ("stacked", lambda s, r: layers.RNN([layers.GRUCell(3), layers.SimpleRNNCell(3)],
                                            return_sequences=s, return_state=r)),
        ("Bidirectional", lambda s, r: layers.Bidirectional(
            layers.GRU(3, return_sequences=s, return_state=r))),
        ("Bidirectional None", lambda s, r: layers.Bidirectional(
            layers.LSTM(3, return_sequences=s, return_state=r), merge_mode=None)),
    ]  # fmt: skip


def _flat(structure):
    if isinstance(structure, (list, tuple)):
        return [leaf for part in structure for leaf in _flat(part)]
    return [structure]


def _plain(masks):
    """A structure of masks as lists, "mask" and None, to compare two libraries' structures."""
    if isinstance(masks, (list, tuple)):
        return [_plain(mask) for mask in masks]
    return None if masks is None else "mask"


def _initial_states(name, layer):
    count = {"LSTM": 2, "RNN(LSTMCell)": 2, "stacked": 2, "Bidirectional": 2}.get(name, 1)
    count = {"Bidirectional None": 4}.get(name, count)
    return [STATE] * count


def test_outputs_states_and_their_masks_match_keras():
    keras = pytest.importorskip("keras")
    from keras.src.backend import get_keras_mask

    theirs_embedding, ours_embedding = _embedding(keras), _embedding(mk)
    ours_embedding.set_weights(theirs_embedding.get_weights())
    convert = keras.ops.convert_to_numpy
    for (name, theirs_maker), (_, ours_maker) in zip(_layers(keras), _layers(mk)):
        # (Keras's eager recurrent calls are slow: the settings where masks differ most.)
        settings = [(True, True), (False, True)] if name.startswith("Bi") else [(True, True)]
        for sequences, states in settings:
            theirs, ours = theirs_maker(sequences, states), ours_maker(sequences, states)
            theirs(theirs_embedding(TOKENS))
            ours(ours_embedding(TOKENS))
            ours.set_weights(theirs.get_weights())
            for initial in (None, _initial_states(name, ours)):
                where = f"{name} return_sequences={sequences} return_state={states} {initial=}"
                kwargs = {} if initial is None else {"initial_state": initial}
                their_outputs = _flat(theirs(theirs_embedding(TOKENS), **kwargs))
                our_outputs = _flat(ours(ours_embedding(TOKENS), **kwargs))
                assert len(our_outputs) == len(their_outputs), where
                for their, our in zip(their_outputs, our_outputs):
                    np.testing.assert_allclose(
                        our.numpy(), convert(their), rtol=1e-5, atol=1e-6, err_msg=where
                    )
                    their_mask = get_keras_mask(their)
                    if their_mask is None:
                        assert _mask_of(our) is None, where
                    else:
                        np.testing.assert_array_equal(_mask_of(our), convert(their_mask), where)
            if name.startswith("Bidirectional"):
                ours_masks = _plain(ours.compute_mask(None, PADDING))
                assert ours_masks == _plain(theirs.compute_mask(None, PADDING)), where


def test_the_mask_left_off_is_said_once_per_layer():
    embedding = _embedding(mk)
    layer = mk.layers.GRU(3, name="decoder")
    with pytest.warns(UserWarning, match="GRU 'decoder': its sequences carry a mask, which is not"):
        layer(embedding(TOKENS), initial_state=[STATE])

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layer(embedding(TOKENS), initial_state=[STATE], mask=PADDING)  # applied: nothing to say
        layer(embedding(TOKENS).numpy(), initial_state=[STATE])  # no mask: nothing to say
        layer(embedding(TOKENS))  # no initial state: the mask applies
