def to_cents(s):
    dollars, cents = s.lstrip("$").split(".")
    return int(dollars) * 100 + int(cents)
