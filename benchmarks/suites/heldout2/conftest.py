"""Make the suite root importable so tests can `from programs.<task> import <func>`."""
import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))
if sys.path[:1] != [_ROOT]:
    sys.path.insert(0, _ROOT)
