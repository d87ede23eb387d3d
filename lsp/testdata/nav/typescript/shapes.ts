/** Anything with an area. */
export interface Shape {
  area(): number;
}

/** A shape with four equal sides. */
export class Square implements Shape {
  constructor(public side: number) {}
  area(): number {
    return this.side * this.side;
  }
}

/** A round shape. */
export class Circle implements Shape {
  constructor(public r: number) {}
  area(): number {
    return 3 * this.r * this.r;
  }
}
