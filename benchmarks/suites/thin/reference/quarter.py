def quarter(month):
    return (month - 1) // 3 + 1
