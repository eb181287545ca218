INPUTS = [(s,) for s in ['', '5s', '2m', '1h', '1h2m3s', '10s10s', '90m', '0h0m7s', '90s', '1m75s', '3600s']]
