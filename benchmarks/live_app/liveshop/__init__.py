"""The application package of the live-service benchmark (benchmarks/live.py): the code regrow watches."""
