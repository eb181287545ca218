def parse_bool(s):
    return s.strip().upper() in ("1", "true", "yes", "on")
