"""Counting things."""

from .stats import mean

__all__ = ["mean"]
