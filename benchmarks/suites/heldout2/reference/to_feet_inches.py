def to_feet_inches(cm):
    total_inches = round(cm / 2.54)
    return total_inches // 12, total_inches % 12
