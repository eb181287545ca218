def sum_csv(s):
    return sum(int(x) for x in s.split(","))
