"""A shipped example with a bug for `make run`: the currency symbol is cut off one character too far."""

CURRENCY_SYMBOLS = "$€£₹"


def parse_price(text: str) -> float:
    """'$12.99' -> 12.99, '₹1,299' -> 1299.0, '7.5' -> 7.5."""
    text = text.strip()
    if text and text[0] in CURRENCY_SYMBOLS:
        text = text[2:]
    return float(text.replace(",", ""))
