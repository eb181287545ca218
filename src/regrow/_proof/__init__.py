"""6. How a verdict is reached: rails, the capability check, judging in the host, the policy."""
