def is_balanced(s):
    """True if the parentheses in s are balanced; other characters are ignored."""
    opened = 0
    closed = 0
    for ch in s:
        if ch == "(":
            opened += 1
        elif ch == ")":
            closed += 1
            if closed > opened:
                return False
    return True
