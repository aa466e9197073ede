// Parses docs/asyncapi.yaml with the official AsyncAPI parser (@asyncapi/parser, installed by
// ./scripts/test into target/asyncapi) and prints every diagnostic, one a line:
//   <severity> <code> <path> <message>
// then `errors=<n> warnings=<n> document=<yes|no>`. tests/asyncapi_parser.rs runs it and
// fails on any error or warning. Usage: node asyncapi_parse.mjs <parser dir> <spec file>
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const [parserDir, spec] = process.argv.slice(2);
if (!parserDir || !spec) {
  console.error("usage: node asyncapi_parse.mjs <dir holding node_modules> <asyncapi.yaml>");
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(parserDir), "package.json"));
const { Parser, DiagnosticSeverity } = require("@asyncapi/parser");
const parser = new Parser();
const { document, diagnostics } = await parser.parse(readFileSync(spec, "utf8"), { source: path.resolve(spec) });
const names = { [DiagnosticSeverity.Error]: "error", [DiagnosticSeverity.Warning]: "warning",
  [DiagnosticSeverity.Information]: "info", [DiagnosticSeverity.Hint]: "hint" };
let errors = 0, warnings = 0;
for (const d of diagnostics) {
  const severity = names[d.severity] ?? String(d.severity);
  if (d.severity === DiagnosticSeverity.Error) errors++;
  if (d.severity === DiagnosticSeverity.Warning) warnings++;
  console.log(`${severity} ${d.code} ${d.path.join("/")} ${d.message.replace(/\s+/g, " ")}`);
}
console.log(`errors=${errors} warnings=${warnings} document=${document ? "yes" : "no"}`);
