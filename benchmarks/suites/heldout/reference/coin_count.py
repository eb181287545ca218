def coin_count(amount):
    count = 0
    for coin in (25, 10, 5, 1):
        count += amount // coin
        amount %= coin
    return count
