def coin_flip():
    return 1
