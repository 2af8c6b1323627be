"""Helpers for users, as `keras.utils` has them: seeding, naming, and more to come."""

from minikeras.utils.naming import to_snake_case
from minikeras.utils.seeding import set_random_seed

__all__ = ["set_random_seed", "to_snake_case"]
