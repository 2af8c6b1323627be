"""`audio_dataset_from_directory`: a folder of `.wav` files (a subfolder per class) as batches.

WAV files are decoded with the standard library's `wave` module: integer
PCM of 8, 16, 24 or 32 bits, scaled to [-1, 1) as Keras scales them.
"""

import wave

import numpy as np

from minikeras.argument_checks import check_int
from minikeras.utils.directory_index import check_arguments, index_directory, make_datasets

__all__ = ["audio_dataset_from_directory"]

_WHERE = "audio_dataset_from_directory"
AUDIO_FORMATS = (".wav",)


def read_wav(path, where=_WHERE):
    """`(samples, rate)`: a float32 array `(steps, channels)` in [-1, 1) and the sampling rate."""
    try:
        with wave.open(str(path), "rb") as file:
            width, channels = file.getsampwidth(), file.getnchannels()
            rate, frames = file.getframerate(), file.readframes(file.getnframes())
    except (wave.Error, EOFError) as error:
        raise ValueError(
            f"{where}: cannot read {str(path)!r} as integer PCM WAV ({error})"
        ) from error
    if width == 1:  # 8-bit WAV is unsigned
        samples = (np.frombuffer(frames, dtype="uint8").astype("float32") - 128.0) / 128.0
    elif width == 3:  # 24-bit: three little-endian bytes, widened to int32
        raw = np.frombuffer(frames, dtype="uint8").reshape(-1, 3)
        padded = np.zeros((len(raw), 4), dtype="uint8")
        padded[:, 1:] = raw
        samples = padded.view("<i4")[:, 0].astype("float32") / 2.0**31
    else:
        samples = np.frombuffer(frames, dtype=f"<i{width}").astype("float32") / 2.0 ** (
            8 * width - 1
        )
    return samples.reshape(-1, channels).astype("float32"), rate


def _audio_loader(sampling_rate, output_sequence_length):
    """A function from file paths to a float32 batch `(batch, steps, channels)`, zero-padded."""

    def load(paths):
        clips = []
        for path in paths:
            samples, rate = read_wav(path)
            if sampling_rate is not None and rate != sampling_rate:
                raise ValueError(
                    f"{_WHERE}: {str(path)!r} is sampled at {rate} Hz, not sampling_rate="
                    f"{sampling_rate}; minikeras does not resample audio"
                )
            clips.append(samples[:output_sequence_length])
        channels = {clip.shape[1] for clip in clips}
        if len(channels) > 1:
            raise ValueError(
                f"{_WHERE}: the files of a batch have different numbers of channels "
                f"({sorted(channels)}): {paths}"
            )
        steps = output_sequence_length or max(len(clip) for clip in clips)
        batch = np.zeros((len(clips), steps, channels.pop()), dtype="float32")
        for row, clip in zip(batch, clips):
            row[: len(clip)] = clip
        return batch

    return load


def audio_dataset_from_directory(
    directory,
    labels="inferred",
    label_mode="int",
    class_names=None,
    batch_size=32,
    sampling_rate=None,
    output_sequence_length=None,
    ragged=False,
    shuffle=True,
    seed=None,
    validation_split=None,
    subset=None,
    follow_links=False,
    format="tf",
    verbose=True,
):
    """Reads a directory of `.wav` files (a subdirectory per class) as batches of `(audio, labels)`.

    With `labels="inferred"`, `directory/no/*.wav` and `directory/yes/*.wav`
    give labels 0 and 1: the classes are the subdirectories in alphanumeric
    order (or `class_names`' order), and the files anywhere below one belong
    to it. Integer PCM WAV files (8, 16, 24 or 32 bits) are decoded with the
    standard library's `wave` module, to float32 in [-1, 1).

    Keras returns a `tf.data.Dataset`; minikeras returns a
    `minikeras.utils.PyDataset` of numpy batches, with Keras's `class_names`,
    and `file_paths`, `take(n)` and `len` (in batches). Differs from Keras:
    no resampling (a file sampled at another rate than `sampling_rate`
    raises a ValueError when its batch is read), no ragged batches, and no
    32-bit float WAV files (the `wave` module reads integer PCM only).
    Shuffling, the validation split and the messages are as in
    `image_dataset_from_directory`.

    Args:
        directory: the directory (a path) to read.
        labels: `"inferred"` (from the subdirectories), None (audio only),
            or a list/tuple of int labels, one per file in the alphanumeric
            order of their paths.
        label_mode: `"int"`, `"categorical"`, `"binary"` or None, as in
            `image_dataset_from_directory`.
        class_names: with `labels="inferred"`, the subdirectories to read,
            in the order of their labels; None reads all, alphanumerically.
        batch_size: the clips in a batch (the last may be smaller); None
            yields single clips, without a batch axis.
        sampling_rate: None, or the int rate (samples per second) every file
            must have.
        output_sequence_length: None (each batch zero-padded to its longest
            clip) or the int number of steps every clip is cut or
            zero-padded to.
        ragged: False only (Keras's ragged tensors have no numpy analogue).
        shuffle: whether to shuffle the files; False keeps them in
            alphanumeric order.
        seed: int seed for the shuffle; None draws one from the global
            generator (needed with `validation_split` and `shuffle`).
        validation_split: a float in (0, 1): the fraction of the files kept
            for validation (the last ones, after the shuffle).
        subset: with `validation_split`, `"training"`, `"validation"` or
            `"both"` (a `(training, validation)` tuple).
        follow_links: whether to read subdirectories that are symbolic links.
        format: Keras's choice of dataset, `"tf"` or `"grain"`; both give
            the same `PyDataset` here.
        verbose: whether to print how many files and classes were found.

    Returns:
        A `PyDataset` yielding `(audio, labels)` (or audio alone without
        labels), the audio float32 of shape `(batch, steps, channels)`; or,
        with `subset="both"`, a `(training, validation)` tuple of them.

    Raises:
        ValueError: if an argument is not one of its values (naming it),
            `ragged` is True, the directory does not exist or holds no
            `.wav` file, `class_names` are not its subdirectories, `labels`
            do not match the files in number, `label_mode="binary"` has other
            than two classes, or explicit labels are outside [0, number of
            classes) with `"categorical"` or `"binary"` (Keras encodes those
            silently); when a batch is read, if a file is not
            integer PCM WAV or has another rate than `sampling_rate`.

    Example:
        >>> import os, tempfile, wave
        >>> folder = tempfile.mkdtemp()
        >>> for label, steps in (("no", 3), ("yes", 5)):
        ...     os.makedirs(os.path.join(folder, label))
        ...     with wave.open(os.path.join(folder, label, "clip.wav"), "wb") as file:
        ...         file.setparams((1, 2, 16000, 0, "NONE", None))
        ...         file.writeframes(np.full(steps, 16384, dtype="<i2").tobytes())
        >>> dataset = mk.utils.audio_dataset_from_directory(folder, shuffle=False, verbose=False)
        >>> audio, labels = dataset[0]
        >>> audio.shape, audio[0, :, 0].tolist(), labels.tolist()
        ((2, 5, 1), [0.5, 0.5, 0.5, 0.0, 0.0], [0, 1])
    """
    if format not in ("tf", "grain"):
        raise ValueError(f"{_WHERE}: format must be 'tf' or 'grain', got {format!r}")
    labels, label_mode, seed = check_arguments(
        _WHERE, labels, label_mode, class_names, validation_split, subset, shuffle, seed
    )
    if ragged:
        raise ValueError(f"{_WHERE}: ragged=True is not supported by minikeras (no ragged arrays)")
    check_int(_WHERE, "sampling_rate", sampling_rate, 1, allow_none=True)
    check_int(_WHERE, "output_sequence_length", output_sequence_length, 1, allow_none=True)
    index = index_directory(
        _WHERE, directory, labels, AUDIO_FORMATS, class_names, shuffle, seed, follow_links, verbose
    )
    load = _audio_loader(sampling_rate, output_sequence_length)
    return make_datasets(
        _WHERE, index, AUDIO_FORMATS, label_mode, load, batch_size, shuffle, seed,
        validation_split, subset, verbose,
    )  # fmt: skip
