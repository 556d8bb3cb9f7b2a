"""Command-line entry points: dan-opt, dan-export, dan-replay, dan-bench."""
