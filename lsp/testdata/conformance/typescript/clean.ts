export function clean(name: string): string {
  return "😀 hello " + name;
}
