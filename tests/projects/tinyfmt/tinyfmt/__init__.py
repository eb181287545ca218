"""A tiny package for the missing-module tests: built into a wheel by the test, installed from a folder."""

__version__ = "1.0.0"


def shout(text):
    return text.upper() + "!"
