from shapes import Circle, Shape, Square


def total(shapes: list[Shape]) -> float:
    """Sum the areas of shapes."""
    result = 0.0
    for s in shapes:
        result = result + s.area()
    return result


def report() -> str:
    sq = Square(2)
    return label("😀 🎉", total([sq, Circle(1)]))


def label(prefix: str, v: float) -> str:
    if v > 10:
        return prefix + " big"
    return prefix + " small"
