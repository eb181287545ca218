def weeks(days):
    return (days + 7) // 7
