def center(s, width, fill=" "):
    if len(s) >= width:
        return s
    total = width - len(s)
    left = total // 2
    right = left
    return fill * left + s + fill * right
