def merge(base, override):
    return {**base, **override}
