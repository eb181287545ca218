def merge(base, override):
    return {**override, **base}
