INPUTS = [(h, m) for h in (0, 1, 3, 6, 9, 11, 12, 15, 23) for m in (0, 15, 30, 45, 59)]
