"""The one answer to "is this frame regrow's own": its file is in the package or is a wrapper's code.

Evidence, captures, the no-oracle policy and the model's view of a traceback all leave regrow's own
frames out; they ask here, so that moving a module never changes which frames count as the user's.
"""

from __future__ import annotations

from pathlib import Path

# The package folder, found by name from this file so that it holds wherever this module sits in it.
PACKAGE_DIR = str(next(folder for folder in Path(__file__).resolve().parents if folder.name == "regrow"))
# The file name of every wrapper's code (see regrow._wrapper): "your code only" leaves these frames out.
WRAPPER_FILE = "<regrow wrapper of "
OWN = (PACKAGE_DIR, WRAPPER_FILE)  # prefixes of the file names of regrow's own frames


def own(filename: str) -> bool:
    """Whether code from ``filename`` is regrow's own (the package or a wrapper), not the user's."""
    return filename.startswith(OWN)
