def weekly_pay(hours, rate):
    """Hours above 40 are paid at time and a half."""
    regular = min(hours, 40)
    overtime = hours - 40
    return regular * rate + overtime * rate * 1.5
