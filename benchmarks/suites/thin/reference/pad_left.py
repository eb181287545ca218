def pad_left(s, width, ch=" "):
    return ch * (width - len(s)) + s
