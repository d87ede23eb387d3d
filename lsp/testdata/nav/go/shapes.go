package nav

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// Square is a shape with four equal sides.
type Square struct{ Side float64 }

// Area returns the square's area.
func (s Square) Area() float64 { return s.Side * s.Side }

// Circle is a round shape.
type Circle struct{ R float64 }

// Area returns the circle's area, roughly.
func (c Circle) Area() float64 { return 3 * c.R * c.R }
