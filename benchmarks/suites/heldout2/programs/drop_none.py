def drop_none(d):
    result = {}
    for k, v in d.items():
        if v:
            result[k] = v
    return result
