def result(score):
    a, b = map(int, score.split("-"))
    if a > b:
        return "home"
    if a < b:
        return "away"
    return "draw"
