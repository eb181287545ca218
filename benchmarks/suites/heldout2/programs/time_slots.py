from datetime import datetime, timedelta


def time_slots(start, end, step):
    """Start times ("HH:MM") of the step-minute slots that fit between start and end."""
    t = datetime.strptime(start, "%H:%M")
    stop = datetime.strptime(end, "%H:%M")
    slots = []
    while t + timedelta(minutes=step) < stop:
        slots.append(t.strftime("%H:%M"))
        t += timedelta(minutes=step)
    return slots
