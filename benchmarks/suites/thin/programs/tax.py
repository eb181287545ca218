def tax(income):
    if income <= 10000:
        return 0
    return (income - 1000) * 0.2
