// Fails on a reference to a file or anchor of this repository that does not exist: relative links
// in Markdown files, and `docs/...` paths (with an optional #anchor) in code, scripts and configs.
// Anchors are the slugs a Markdown renderer gives headings: lowercase, punctuation dropped, spaces
// as hyphens, a repeated heading numbered (-1, -2, ...).
//
//   node scripts/check_links.mjs FILE...   (scripts/lint.sh passes every tracked file)
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const root = process.cwd();
const anchorsOf = new Map();

function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file) {
  if (!anchorsOf.has(file)) {
    const seen = new Map();
    const found = new Set();
    let fenced = false;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (/^\s*```/.test(line)) fenced = !fenced;
      const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (!heading) continue;
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of readFileSync(file, 'utf8').matchAll(/<a (?:name|id)="([^"]+)"/g)) found.add(m[1]);
    anchorsOf.set(file, found);
  }
  return anchorsOf.get(file);
}

// The problem with `target` (a path relative to `base`, with an optional #anchor), or null.
function problem(base, target) {
  const [path, anchor] = target.split('#');
  const file = path === '' ? null : normalize(join(base, decodeURI(path)));
  if (file !== null && !existsSync(file)) return `no such file: ${relative(root, file)}`;
  if (anchor === undefined || anchor === '') return null;
  const page = file ?? null;
  if (page === null || !page.endsWith('.md') || statSync(page).isDirectory()) return null;
  return anchors(page).has(anchor) ? null : `no heading #${anchor} in ${relative(root, page)}`;
}

let failures = 0;
function report(file, lineNo, target, why) {
  console.log(`${file}:${lineNo}: ${target}: ${why}`);
  failures++;
}

for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  if (file.endsWith('.md')) {
    let fenced = false;
    lines.forEach((line, i) => {
      if (/^\s*```/.test(line)) fenced = !fenced;
      if (fenced) return;
      const prose = line.replace(/`[^`]*`/g, '');
      for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/i.test(target)) continue;  // http:, https:, mailto:
        const why = target.startsWith('#')
          ? (anchors(file).has(target.slice(1)) ? null : `no heading ${target} in ${file}`)
          : problem(dirname(file), target);
        if (why) report(file, i + 1, target, why);
      }
    });
  } else {
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/(?<![\w/.-])docs\/[\w/.-]*[\w/](?:#[\w-]+)?/g)) {
        const target = m[0];
        const why = problem(root, target);
        if (why) report(file, i + 1, target, why);
      }
    });
  }
}
if (failures > 0) {
  console.log(`lint: ${failures} reference(s) to missing files or headings`);
  process.exit(1);
}
