def count_sentences(text):
    count = 0
    prev_end = True
    for ch in text:
        if ch in ".!?":
            if not prev_end:
                count += 1
            prev_end = True
        elif not ch.isspace():
            prev_end = False
    return count
