def drop_none(d):
    result = {}
    for k, v in d.items():
        if v is not None:
            result[k] = v
    return result
