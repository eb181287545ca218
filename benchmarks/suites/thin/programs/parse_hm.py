def to_minutes(s):
    h, m = s.split(":")
    return int(h) * 60 + int(m) * 60
