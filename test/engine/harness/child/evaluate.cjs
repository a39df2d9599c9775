// Evaluates `__provider` texts the way the host does (require-from-string, then handler()), and lists
// the methods each yields. Reads a JSON array of texts on stdin; prints a JSON array of method lists.
"use strict";
const requireFromString = require(
  require.resolve("require-from-string", {
    paths: [require.resolve("@pulumi/pulumi/package.json")],
  }),
);

let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const texts = JSON.parse(input);
  const out = texts.map((text) => {
    const provider = requireFromString(text).handler();
    return Object.keys(provider)
      .filter((k) => typeof provider[k] === "function")
      .sort();
  });
  process.stdout.write(JSON.stringify(out));
});
