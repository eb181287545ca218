def extract_ints(s):
    nums, cur = [], ""
    for c in s + " ":
        if c.isdigit():
            cur += c
        elif cur:
            nums.append(int(cur))
            cur = ""
    return nums
