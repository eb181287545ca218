import re
def parse_duration(s):
    total = 0
    for num, unit in re.findall(r"(\d+)([hms])", s):
        if unit == "h":
            total += int(num) * 3600
        elif unit == "m":
            total += int(num) * 60
        else:
            total += int(num) * 60
    return total
