def already_right(items):
    return len(items)
