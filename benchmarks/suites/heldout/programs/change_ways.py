def change_ways(amount, coins):
    if amount == 0:
        return 1
    if amount < 0 or not coins:
        return 0
    return change_ways(amount - coins[0], coins[1:]) + change_ways(amount, coins[1:])
