def net_balance(transactions):
    """Apply (kind, amount) pairs to a zero balance; unknown kinds are ignored."""
    balance = 0
    for kind, amount in transactions:
        if kind == "deposit":
            balance += amount
        elif kind == "withdraw":
            balance -= amount
    return balance
