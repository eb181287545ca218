from datetime import date
def age(born, today):
    return today.year - born.year - ((today.month, today.day) <= (born.month, born.day))
