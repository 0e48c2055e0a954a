// TypeScript is transpiled to JavaScript inside the sandbox, then run in QuickJS.
enum Color { Red, Green, Blue }

interface Point { x: number; y: number }

function norm<T extends Point>(p: T): number {
  return Math.sqrt(p.x * p.x + p.y * p.y);
}

console.log(`norm = ${norm({ x: 3, y: 4 })}, color = ${Color[Color.Green]}`);
