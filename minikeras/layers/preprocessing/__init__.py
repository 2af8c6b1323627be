"""Preprocessing layers on numpy arrays: numbers, images, categories, strings and text.

One module per family:

- `numerical`: Rescaling, Normalization; `discretization`: Discretization;
- `image`: Resizing, CenterCrop;
- `categorical`: CategoryEncoding, Hashing; `hashed_crossing`: HashedCrossing;
- `index_lookup` and `lookups`: StringLookup, IntegerLookup;
- `text_vectorization`: TextVectorization;
- `augmentation` (the base and the affine resampling), `random_affine` (RandomRotation,
  RandomTranslation, RandomZoom), `random_image` (RandomFlip, RandomCrop,
  RandomContrast, RandomBrightness) and `random_color` (RandomGrayscale, RandomInvert,
  Solarization, RandomPosterization; and AutoContrast, which always applies): active unless
  called with `training=False`, as in Keras; `mixing` (RandomErasing, MixUp, CutMix)
  replaces or blends regions; `color_hsv` (RandomHue, RandomSaturation,
  RandomColorJitter) and `color_filters` (Equalization, RandomColorDegeneration,
  RandomSharpness, RandomGaussianBlur) change colours and mix neighbours;
  `random_geometry` (RandomShear, RandomPerspective, RandomElasticTransform) warps;
  `composite_augment` (RandAugment, AugMix) chooses among the others; `clahe`
  (ContrastLimitedAdaptiveHistogramEqualization) equalizes tiles, always;
- `pipeline`: Pipeline, which applies a list of them in turn;
- `stft_spectrogram` and `mel_spectrogram`: STFTSpectrogram and MelSpectrogram, for audio;
- `feature_space` (with `feature_kinds`, `feature_specs` and `feature_data`): FeatureSpace,
  which combines the layers above for structured data; exported as
  `minikeras.utils.FeatureSpace`, as Keras exports it, not from here.
"""

from minikeras.layers.preprocessing.categorical import CategoryEncoding, Hashing
from minikeras.layers.preprocessing.clahe import ContrastLimitedAdaptiveHistogramEqualization
from minikeras.layers.preprocessing.color_filters import (
    Equalization,
    RandomColorDegeneration,
    RandomGaussianBlur,
    RandomSharpness,
)
from minikeras.layers.preprocessing.color_hsv import RandomColorJitter, RandomHue, RandomSaturation
from minikeras.layers.preprocessing.composite_augment import AugMix, RandAugment
from minikeras.layers.preprocessing.discretization import Discretization
from minikeras.layers.preprocessing.hashed_crossing import HashedCrossing
from minikeras.layers.preprocessing.image import CenterCrop, Resizing
from minikeras.layers.preprocessing.lookups import IntegerLookup, StringLookup
from minikeras.layers.preprocessing.mel_spectrogram import MelSpectrogram
from minikeras.layers.preprocessing.mixing import CutMix, MixUp, RandomErasing
from minikeras.layers.preprocessing.numerical import Normalization, Rescaling
from minikeras.layers.preprocessing.pipeline import Pipeline
from minikeras.layers.preprocessing.random_affine import (
    RandomRotation,
    RandomTranslation,
    RandomZoom,
)
from minikeras.layers.preprocessing.random_color import (
    AutoContrast,
    RandomGrayscale,
    RandomInvert,
    RandomPosterization,
    Solarization,
)
from minikeras.layers.preprocessing.random_geometry import (
    RandomElasticTransform,
    RandomPerspective,
    RandomShear,
)
from minikeras.layers.preprocessing.random_image import (
    RandomBrightness,
    RandomContrast,
    RandomCrop,
    RandomFlip,
)
from minikeras.layers.preprocessing.stft_spectrogram import STFTSpectrogram
from minikeras.layers.preprocessing.text_vectorization import TextVectorization

__all__ = [
    "AugMix",
    "AutoContrast",
    "CategoryEncoding",
    "CenterCrop",
    "ContrastLimitedAdaptiveHistogramEqualization",
    "CutMix",
    "Discretization",
    "Equalization",
    "HashedCrossing",
    "Hashing",
    "IntegerLookup",
    "MelSpectrogram",
    "MixUp",
    "Normalization",
    "Pipeline",
    "RandAugment",
    "RandomBrightness",
    "RandomColorDegeneration",
    "RandomColorJitter",
    "RandomContrast",
    "RandomCrop",
    "RandomElasticTransform",
    "RandomErasing",
    "RandomFlip",
    "RandomGaussianBlur",
    "RandomGrayscale",
    "RandomHue",
    "RandomInvert",
    "RandomPerspective",
    "RandomPosterization",
    "RandomRotation",
    "RandomSaturation",
    "RandomSharpness",
    "RandomShear",
    "RandomTranslation",
    "RandomZoom",
    "Rescaling",
    "STFTSpectrogram",
    "Resizing",
    "Solarization",
    "StringLookup",
    "TextVectorization",
]
