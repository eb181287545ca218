def pace(distance_km, seconds):
    """Running pace as "M:SS" per kilometre."""
    per_km = round(seconds / distance_km)
    return f"{per_km // 60}:{per_km % 60}"
