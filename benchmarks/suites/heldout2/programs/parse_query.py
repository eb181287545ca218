def parse_query(qs):
    result = {}
    for pair in qs.split("&"):
        if not pair:
            continue
        key, _, value = pair.rpartition("=")
        result[key] = value
    return result
