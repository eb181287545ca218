def hamming_bits(a, b):
    return bin(a | b).count("1")
