class Box:
    """An object the bench has no variations of."""

    def __init__(self, content):
        self.content = content


def unbox(box):
    return box.content + 1
