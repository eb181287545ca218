def consecutive_ranges(nums):
    ranges = []
    for n in sorted(set(nums)):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return [tuple(r) for r in ranges]
