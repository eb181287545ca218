def parse_bool(s):
    return s.strip().lower() in ("1", "true", "yes", "on")
