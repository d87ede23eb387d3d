def double(value):
    """Return twice value."""
    return value * 2
