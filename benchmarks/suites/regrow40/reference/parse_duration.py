def parse_duration(text):
    """'1h30m15s' -> seconds; units h, m and s may each appear at most once."""
    units = {"h": 3600, "m": 60, "s": 1}
    total = 0
    number = ""
    for ch in text:
        if ch.isdigit():
            number += ch
        elif ch in units:
            total += int(number) * units[ch]
            number = ""
    return total
