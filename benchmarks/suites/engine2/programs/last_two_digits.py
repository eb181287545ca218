def last_two_digits(year):
    """The two-digit form of a year: 1987 -> "87", 2005 -> "05"."""
    return f"{abs(year) % 10:02d}"
