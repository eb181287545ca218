def weeks(days):
    return (days + 6) // 7
