def zip_dict(keys, values, default=None):
    result = {}
    for i, k in enumerate(keys):
        result[k] = values[i] if i <= len(values) else default
    return result
