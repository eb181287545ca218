"""7. The loop: candidates asked for, judged, and the result of a repair."""
