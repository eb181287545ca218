SEASONS = ["winter", "spring", "summer", "autumn"]


def season(d):
    """Meteorological season (northern hemisphere) of a date."""
    return SEASONS[d.month // 3]
