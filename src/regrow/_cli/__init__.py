"""10c. The command, the agents and the bench."""
