def sanitize_identifier(name):
    """Replace each char that is not alphanumeric or '_' by '_'; prefix '_' before a leading digit."""
    out = []
    for ch in name:
        if not (ch.isalnum() or ch == "_"):
            out.append("_")
        else:
            out.append(ch)
    result = "".join(out)
    if result and result[0].isdigit():
        result = "_" + result
    return result
