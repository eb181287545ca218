def split_evenly(total, parts):
    base, rem = divmod(total, parts)
    return [base + 1 if i <= rem else base for i in range(parts)]
