#!/usr/bin/env node
/*
 * The contract's two AsyncAPI tools, on the libraries the AsyncAPI CLI itself runs them with:
 *
 *   node asyncapi.cjs validate FILE [--fail-severity error|warn|info|hint]
 *       @asyncapi/parser with its default ruleset (the CLI's `asyncapi validate`): every
 *       diagnostic on a line (line:column, severity, rule, message, path, file), then
 *       "N errors, N warnings, N infos, N hints". Exit 1 if a diagnostic is at or above the
 *       fail severity (default error), or if the document cannot be parsed.
 *   node asyncapi.cjs models python FILE OUTPUT_DIR
 *       @asyncapi/modelina's PythonFileGenerator (the CLI's `asyncapi generate models python`):
 *       one module per model in OUTPUT_DIR. Exit 1 if the document is invalid.
 *
 * Why not the CLI (`@asyncapi/cli`): it installs 1,487 npm packages (its Studio brings Next.js
 * and Monaco) and costs ~140 CPU seconds of `npm ci` on a fresh machine, for the two commands
 * above; these two libraries are 298 packages (~20 CPU s). docs/contrato.md ("Decisions where
 * the issue was silent", the validator) has the choice; tests/contrato/test_asyncapi.py runs both.
 */
'use strict';

const fs = require('fs');
const path = require('path');
const { Parser } = require('@asyncapi/parser/cjs');

const SEVERITIES = ['error', 'warn', 'info', 'hint']; // spectral's DiagnosticSeverity 0..3
const USAGE =
  'usage: asyncapi.cjs validate FILE [--fail-severity error|warn|info|hint]\n' +
  '       asyncapi.cjs models python FILE OUTPUT_DIR';

/** Parse FILE (relative $refs resolved against its folder): the document and diagnostics. */
async function parse(file) {
  const source = path.resolve(file);
  const text = fs.readFileSync(source, 'utf8');
  return new Parser().parse(text, { source });
}

/** One diagnostic as a line a person can act on. */
function describe(d) {
  const start = d.range && d.range.start ? d.range.start : { line: 0, character: 0 };
  const where = (d.path || []).join('.');
  const file = d.source ? `  ${d.source}` : '';
  const severity = SEVERITIES[d.severity] || String(d.severity);
  return `${start.line + 1}:${start.character + 1}  ${severity}  ${d.code}  ${d.message}  ${where}${file}`;
}

/** The counts line: "N errors, N warnings, N infos, N hints". */
function summary(diagnostics) {
  const n = [0, 0, 0, 0];
  for (const d of diagnostics) n[d.severity] = (n[d.severity] || 0) + 1;
  return `${n[0]} errors, ${n[1]} warnings, ${n[2]} infos, ${n[3]} hints`;
}

async function validate(args) {
  const file = args[0];
  let fail = 'error';
  const flag = args.indexOf('--fail-severity');
  if (flag >= 0) fail = args[flag + 1];
  const level = SEVERITIES.indexOf(fail);
  if (!file || level < 0) throw new Usage();
  const { document, diagnostics } = await parse(file);
  for (const d of diagnostics) console.log(describe(d));
  console.log(summary(diagnostics));
  const failing = diagnostics.some((d) => d.severity <= level);
  if (!document || failing) {
    console.error(`${file}: not valid (fail severity ${fail})`);
    return 1;
  }
  console.log(`${file} is a valid AsyncAPI document`);
  return 0;
}

async function models(args) {
  const [language, file, output] = args;
  if (language !== 'python' || !file || !output) throw new Usage();
  const { document, diagnostics } = await parse(file);
  const errors = diagnostics.filter((d) => d.severity === 0);
  if (!document || errors.length) {
    for (const d of errors) console.error(describe(d));
    console.error(`${file}: not a valid AsyncAPI document, no models generated`);
    return 1;
  }
  const { PythonFileGenerator } = require('@asyncapi/modelina');
  const generated = await new PythonFileGenerator().generateToFiles(document, output, undefined);
  console.log(`generated ${generated.map((m) => m.modelName).join(', ')} in ${output}`);
  return 0;
}

class Usage extends Error {}

async function main(argv) {
  const [command, ...args] = argv;
  try {
    if (command === 'validate') return await validate(args);
    if (command === 'models') return await models(args);
    throw new Usage();
  } catch (err) {
    if (err instanceof Usage) {
      console.error(USAGE);
      return 2;
    }
    console.error(`asyncapi.cjs: ${err && err.stack ? err.stack : err}`);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
