def split_name(full):
    parts = full.split()
    return parts[0], " ".join(parts[2:])
