def max_depth(node):
    """Nesting depth of lists: 5 -> 0, [] -> 1, [1, [2]] -> 2."""
    if not isinstance(node, list):
        return 0
    if not node:
        return 1
    return 1 + min(max_depth(child) for child in node)
