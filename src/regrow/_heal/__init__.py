"""10a. The in-process front-ends: ``@heal``, ``repair()`` and the one assembly of a repair."""
