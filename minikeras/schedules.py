"""The learning rate schedules under their older path: see `minikeras.optimizers.schedules`.

Kept so that `from minikeras import schedules` goes on working; the classes
are the same objects.
"""

from minikeras.optimizers.schedules import (
    CosineDecay,
    CosineDecayRestarts,
    ExponentialDecay,
    InverseTimeDecay,
    LearningRateSchedule,
    PiecewiseConstantDecay,
    PolynomialDecay,
    check_number,
    deserialize,
    serialize,
)

__all__ = [
    "CosineDecay",
    "CosineDecayRestarts",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LearningRateSchedule",
    "PiecewiseConstantDecay",
    "PolynomialDecay",
    "check_number",
    "deserialize",
    "serialize",
]
