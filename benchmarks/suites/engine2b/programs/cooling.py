import math


def cooling(start, room, rate, minutes):
    """Newton's cooling: the temperature after ``minutes``."""
    return room + (start - room) * math.exp(rate * minutes)
