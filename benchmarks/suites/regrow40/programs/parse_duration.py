def parse_duration(text):
    """'1h30m15s' -> seconds; units h, m and s may each appear at most once."""
    total = 0
    number = ""
    for ch in text:
        if ch.isdigit():
            number += ch
        elif ch == "h":
            total += int(number) * 3600
            number = ""
    return total
