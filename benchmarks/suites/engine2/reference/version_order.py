def version_order(a, b):
    """-1, 0 or 1 as dotted version ``a`` is older than, equal to or newer than ``b``."""
    left = [int(part) for part in a.split(".")]
    right = [int(part) for part in b.split(".")]
    for x, y in zip(left, right):
        if x != y:
            return 1 if x > y else -1
    if len(left) == len(right):
        return 0
    return 1 if len(left) > len(right) else -1
