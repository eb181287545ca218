def iso_week_label(d):
    year, week, _ = d.isocalendar()
    return f"{d.year}-W{week:02d}"
