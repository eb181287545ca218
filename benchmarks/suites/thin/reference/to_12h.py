def to_12h(s):
    h, m = map(int, s.split(":"))
    suffix = "AM" if h < 12 else "PM"
    h = h % 12 or 12
    return f"{h}:{m:02d} {suffix}"
