"""Fixture projects, laid out like real ones: the tests copy them and run pytest and regrow in them.

Their own test files are not tests of regrow: this folder is never collected.
"""

collect_ignore_glob = ["*"]
