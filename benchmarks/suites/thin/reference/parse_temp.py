def parse_temp(s):
    return float(s.strip()[:-1])
