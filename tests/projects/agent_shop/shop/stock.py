"""Stock levels of a small shop (the fixture of the agent integrations: one bug, in restock)."""


def restock(levels, item, amount):
    """The levels with ``amount`` more of ``item``; an item not stocked yet starts at zero."""
    if amount < 0:
        raise ValueError("amount must not be negative")
    current = levels.get(item, 0)
    total = current - amount
    return {**levels, item: total}


def in_stock(levels, item):
    return levels.get(item, 0) > 0
