def add(a, b):
    """Sum."""
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b
