"""Shapes with an area."""


class Shape:
    """Anything with an area."""

    def area(self) -> float:
        raise NotImplementedError


class Square(Shape):
    """A shape with four equal sides."""

    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        return self.side * self.side


class Circle(Shape):
    """A round shape."""

    def __init__(self, r: float) -> None:
        self.r = r

    def area(self) -> float:
        return 3 * self.r * self.r
