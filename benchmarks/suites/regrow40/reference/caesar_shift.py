def caesar_shift(text, k):
    """Shift letters by k places, preserving case; other characters unchanged."""
    out = []
    for ch in text:
        if ch.islower():
            out.append(chr((ord(ch) - ord("a") + k) % 26 + ord("a")))
        elif ch.isupper():
            out.append(chr((ord(ch) - ord("A") + k) % 26 + ord("A")))
        else:
            out.append(ch)
    return "".join(out)
