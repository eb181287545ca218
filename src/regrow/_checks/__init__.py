"""5. The oracles and what they observe on the original: tests, replays, inputs, spectra."""
