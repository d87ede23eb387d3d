import { Circle, Shape, Square } from "./shapes";

/** Sums the areas of shapes. */
export function total(shapes: Shape[]): number {
  let result = 0;
  for (const s of shapes) {
    result = result + s.area();
  }
  return result;
}

export function report(): string {
  const sq = new Square(2);
  return label("😀 🎉", total([sq, new Circle(1)]));
}

function label(prefix: string, v: number): string {
  if (v > 10) {
    return prefix + " big";
  }
  return prefix + " small";
}
