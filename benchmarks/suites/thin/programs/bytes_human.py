def human_size(n):
    units = ["B", "KB", "MB", "GB"]
    i = 0
    while n > 1024 and i < len(units) - 1:
        n /= 1024
        i += 1
    return f"{n:.1f} {units[i]}"
