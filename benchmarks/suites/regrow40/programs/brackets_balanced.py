def brackets_balanced(s):
    """True if (), [] and {} are properly nested; other characters are ignored."""
    depth = 0
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0
