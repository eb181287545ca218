def total_weight(parcels):
    """The summed "kg" of the parcels; missing parcels (None) count nothing."""
    total = 0
    for parcel in parcels:
        if parcel is None:
            continue
        total += parcel["kg"]
    return total
