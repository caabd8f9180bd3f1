"""Helpers with no knowledge of models: progress bars and timing."""
