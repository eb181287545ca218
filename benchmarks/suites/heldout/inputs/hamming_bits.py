INPUTS = [(a, b) for a in range(0, 6) for b in range(0, 6)] + [(255, 0), (1023, 512), (12, 10), (100, 100)]
