"""`text_dataset_from_directory` and `audio_dataset_from_directory` on trees written here.

Texts are short known strings; WAV files are written with the standard
library's `wave` module from known integer samples, so the float values
(`int16 / 32768`, `(uint8 - 128) / 128`, `int24 / 2**23`) are known by hand.
"""

import os
import wave

import numpy as np
import pytest

import minikeras as mk


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)


@pytest.fixture
def texts(tmp_path):
    root = tmp_path / "reviews"
    for label, name, text in (
        ("pos", "1", "great fun"),
        ("neg", "2", "dull"),
        ("neg", "1", "très ennuyeux"),
        ("pos", "2", "loved it"),
    ):
        _write(str(root / label / f"{name}.txt"), text)
    _write(str(root / "pos" / "skip.md"), "not a .txt file")
    return root


def test_texts_labels_and_order(texts, capsys):
    dataset = mk.utils.text_dataset_from_directory(texts, shuffle=False, batch_size=3)
    assert capsys.readouterr().out == "Found 4 files belonging to 2 classes.\n"
    assert dataset.class_names == ["neg", "pos"] and len(dataset) == 2
    batch_texts, labels = dataset[0]
    assert batch_texts.dtype == object and batch_texts.shape == (3,)
    assert batch_texts.tolist() == ["très ennuyeux", "dull", "great fun"]
    assert labels.dtype == np.int32 and labels.tolist() == [0, 0, 1]
    assert dataset[1][0].tolist() == ["loved it"]
    assert [os.path.basename(p) for p in dataset.file_paths] == ["1.txt", "2.txt"] * 2


def test_text_max_length_label_modes_and_no_labels(texts):
    dataset = mk.utils.text_dataset_from_directory(
        texts, max_length=4, label_mode="categorical", shuffle=False, verbose=False
    )
    batch_texts, labels = dataset[0]
    assert batch_texts.tolist() == ["très", "dull", "grea", "love"]  # characters, not bytes
    np.testing.assert_array_equal(labels, [[1, 0], [1, 0], [0, 1], [0, 1]])
    assert labels.dtype == np.float32
    alone = mk.utils.text_dataset_from_directory(
        texts, labels=None, batch_size=None, shuffle=False, verbose=False
    )
    assert list(alone) == ["très ennuyeux", "dull", "great fun", "loved it"]


def test_text_split_shuffle_and_take(texts):
    kwargs = {"validation_split": 0.25, "seed": 5, "verbose": False}
    training, validation = mk.utils.text_dataset_from_directory(texts, subset="both", **kwargs)
    assert len(training.file_paths) == 3 and len(validation.file_paths) == 1
    assert not set(training.file_paths) & set(validation.file_paths)
    expected = sorted(training.file_paths + validation.file_paths)
    np.random.RandomState(5).shuffle(expected)  # Keras's order for the seed
    assert training.file_paths + validation.file_paths == expected
    texts_read, labels = training.take(1)[0]
    truth = {"great fun": 1, "dull": 0, "très ennuyeux": 0, "loved it": 1}
    assert [truth[text] for text in texts_read] == labels.tolist()


def test_texts_feed_text_vectorization(texts):
    dataset = mk.utils.text_dataset_from_directory(texts, shuffle=False, verbose=False)
    layer = mk.layers.TextVectorization(output_mode="multi_hot")
    layer.adapt(dataset.take(1).__getitem__(0)[0])
    assert np.asarray(layer(dataset[0][0])).shape[0] == 4


def test_text_errors_name_the_argument(texts, tmp_path):
    with pytest.raises(ValueError, match="text_dataset_from_directory: label_mode"):
        mk.utils.text_dataset_from_directory(texts, label_mode="ints")
    with pytest.raises(TypeError, match="max_length"):
        mk.utils.text_dataset_from_directory(texts, max_length="10")
    with pytest.raises(ValueError, match=r"class_names must name subdirectories"):
        mk.utils.text_dataset_from_directory(texts, class_names=["neg", "neutral"])
    (tmp_path / "none" / "a").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"no files found .*\.txt"):
        mk.utils.text_dataset_from_directory(tmp_path / "none", verbose=False)


def _wav(path, samples, width=2, rate=8000):
    """Writes `samples` (steps, channels) as integer PCM of `width` bytes."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    samples = np.asarray(samples)
    if width == 1:
        frames = samples.astype("uint8").tobytes()
    elif width == 3:
        frames = b"".join(int(v).to_bytes(3, "little", signed=True) for v in samples.ravel())
    else:
        frames = samples.astype(f"<i{width}").tobytes()
    with wave.open(str(path), "wb") as file:
        file.setparams((samples.shape[1], width, rate, 0, "NONE", None))
        file.writeframes(frames)


@pytest.fixture
def sounds(tmp_path):
    root = tmp_path / "sounds"
    _wav(root / "no" / "a.wav", [[16384], [-32768], [8192]])
    _wav(root / "yes" / "b.wav", [[128], [192], [0], [64], [255]], width=1)
    _wav(root / "yes" / "c.wav", [[2**22], [-(2**23)]], width=3)
    return root


def test_audio_decodes_pads_and_labels(sounds, capsys):
    dataset = mk.utils.audio_dataset_from_directory(sounds, shuffle=False, batch_size=2)
    assert capsys.readouterr().out == "Found 3 files belonging to 2 classes.\n"
    audio, labels = dataset[0]
    assert audio.dtype == np.float32 and audio.shape == (2, 5, 1)  # padded to the longest
    np.testing.assert_array_equal(audio[0, :, 0], [0.5, -1.0, 0.25, 0, 0])
    np.testing.assert_array_equal(audio[1, :, 0], [0, 0.5, -1.0, -0.5, 127 / 128])
    assert labels.tolist() == [0, 1] and dataset.class_names == ["no", "yes"]
    audio, labels = dataset[1]
    np.testing.assert_array_equal(audio[0, :, 0], [0.5, -1.0])
    assert labels.tolist() == [1]


def test_audio_output_sequence_length_stereo_and_sampling_rate(tmp_path):
    stereo = np.array([[16384, -16384], [0, 8192], [-8192, 0]])
    _wav(tmp_path / "a" / "x.wav", stereo, rate=16000)
    cut = mk.utils.audio_dataset_from_directory(
        tmp_path, output_sequence_length=2, sampling_rate=16000, verbose=False
    )
    np.testing.assert_array_equal(cut[0][0][0], [[0.5, -0.5], [0, 0.25]])
    longer = mk.utils.audio_dataset_from_directory(
        tmp_path, output_sequence_length=4, label_mode=None, batch_size=None, verbose=False
    )
    np.testing.assert_array_equal(longer[0], np.vstack([stereo / 32768, [[0, 0]]]))
    other_rate = mk.utils.audio_dataset_from_directory(tmp_path, sampling_rate=8000, verbose=False)
    with pytest.raises(ValueError, match="16000 Hz, not sampling_rate=8000"):
        other_rate[0]


def test_audio_trains_and_errors(sounds, tmp_path):
    dataset = mk.utils.audio_dataset_from_directory(
        sounds, output_sequence_length=5, label_mode="binary", seed=2, verbose=False
    )
    model = mk.Sequential([mk.Input((5, 1)), mk.layers.Flatten(), mk.layers.Dense(1)])
    model.compile("sgd", mk.losses.BinaryCrossentropy(from_logits=True))
    assert len(model.fit(dataset, epochs=2, verbose=0).history["loss"]) == 2
    with pytest.raises(ValueError, match="ragged"):
        mk.utils.audio_dataset_from_directory(sounds, ragged=True)
    with pytest.raises(TypeError, match="sampling_rate"):
        mk.utils.audio_dataset_from_directory(sounds, sampling_rate=8000.0)
    _write(str(tmp_path / "bad" / "a" / "x.wav"), "not a wav file")
    broken = mk.utils.audio_dataset_from_directory(tmp_path / "bad", verbose=False)
    with pytest.raises(ValueError, match="cannot read .* as integer PCM WAV"):
        broken[0]
