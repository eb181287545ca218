INPUTS = [(f'{h:02d}:{m:02d}',) for h in range(24) for m in (0, 5)]
