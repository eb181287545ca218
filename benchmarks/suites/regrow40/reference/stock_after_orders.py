def stock_after_orders(stock, orders):
    """Fill orders in turn; an order bigger than the stock empties it and counts as unfilled.

    Returns (remaining_stock, unfilled_count).
    """
    unfilled = 0
    for qty in orders:
        if qty > stock:
            unfilled += 1
        stock = max(0, stock - qty)
    return stock, unfilled
