// JavaScript runs in QuickJS-NG compiled to WebAssembly.
const squares = [1, 2, 3, 4, 5].map((n) => n * n);
console.log("squares:", squares.join(", "));
console.log("2^100 =", (2n ** 100n).toString());
