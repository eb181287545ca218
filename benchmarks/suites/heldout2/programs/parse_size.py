UNITS = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}


def parse_size(s):
    """Parse sizes such as "10KB", "1.5 mb" or "512" into a number of bytes."""
    s = s.strip().lower()
    for unit in ("GB", "MB", "KB", "B"):
        if s.endswith(unit):
            return int(float(s[:-len(unit)]) * UNITS[unit])
    return int(s)
