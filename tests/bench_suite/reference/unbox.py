def unbox(box):
    return box.content
