def tax(income):
    if income <= 10000:
        return 0
    return (income - 10000) * 0.2
