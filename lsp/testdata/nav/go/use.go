package nav

// Total sums the areas of shapes.
func Total(shapes []Shape) float64 {
	total := 0.0
	for _, s := range shapes {
		total = total + s.Area()
	}
	return total
}

// Report describes two shapes.
func Report() string {
	sq := Square{Side: 2}
	return label("😀 🎉", Total([]Shape{sq, Circle{R: 1}}))
}

func label(prefix string, v float64) string {
	if v > 10 {
		return prefix + " big"
	}
	return prefix + " small"
}
