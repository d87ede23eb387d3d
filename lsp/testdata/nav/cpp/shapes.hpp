#pragma once

/// Anything with an area.
struct Shape {
  virtual ~Shape() = default;
  virtual double area() const = 0;
};

/// A shape with four equal sides.
struct Square : Shape {
  explicit Square(double s) : side(s) {}
  double area() const override;
  double side;
};

/// A round shape.
struct Circle : Shape {
  explicit Circle(double radius) : r(radius) {}
  double area() const override;
  double r;
};

double total(const Shape *const *shapes, int n);
