def count_multiples(lo, hi, k):
    """How many multiples of k lie in lo..hi (inclusive)."""
    return hi // k - (lo - 1) // k
