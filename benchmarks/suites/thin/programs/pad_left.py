def pad_left(s, width, ch=" "):
    return ch * (width - len(s) - 1) + s
