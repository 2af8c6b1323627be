"""Helpers for users, as `keras.utils` has them: seeding, and (more to come) data utilities."""

from minikeras.utils.seeding import set_random_seed

__all__ = ["set_random_seed"]
