def loan_payment(principal, annual_rate, months):
    r = annual_rate / 12
    if r == 0:
        return round(principal / months, 2)
    return round(principal * r / (1 - (1 + r) ** -months), 2)
