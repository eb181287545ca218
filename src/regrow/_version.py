"""The version, at the bottom of the import order: every module that names it imports it from here."""

__version__ = "0.1.0"
