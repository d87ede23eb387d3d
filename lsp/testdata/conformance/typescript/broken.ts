export function broken(name: string): string {
  return "😀 hello " + name + nowhereDefined;
}
export const count: number = "three";
