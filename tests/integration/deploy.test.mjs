// The operator's monitoring kit in deploy/ against what /metrics really exposes: every PromQL
// expression of the alerting rules (deploy/prometheus/switchyard-alerts.yaml) and of the Grafana
// dashboard (deploy/grafana/switchyard-dashboard.json) is parsed, and every switchyard_* family it
// uses must be exposed with a # TYPE line; the labels it groups, matches or joins on must exist
// on the family's samples; counters and histograms are read through rate()/increase() and
// histogram_quantile() gets its le label. The gateway under test has a master key and client keys
// (so /metrics needs the master key) and serves traffic that fills most families: retries,
// waits, fallbacks, a spend cap, headroom waits and a shed request, key refusals, an SDK retry,
// streams, every model route, and shared state in a real redis-server when one is installed.
//
// SWITCHYARD_ALERTS_FILE / SWITCHYARD_DASHBOARD_FILE check other files instead (a copy to try a
// change on). No dependencies: the YAML subset the rules file uses and PromQL are read by the
// small parsers below.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  startMock, startGateway, startRedis, request, metricValue, eventually, tempDir,
} from './harness.mjs';

const repo = (relative) => fileURLToPath(new URL(`../../${relative}`, import.meta.url));
const RULES_FILE = process.env.SWITCHYARD_ALERTS_FILE ?? repo('deploy/prometheus/switchyard-alerts.yaml');
const DASHBOARD_FILE = process.env.SWITCHYARD_DASHBOARD_FILE ?? repo('deploy/grafana/switchyard-dashboard.json');
const OPERATING_DOC = repo('docs/operating.md');

// Labels Prometheus adds to every scraped series (target labels); queries may group by them.
const TARGET_LABELS = ['instance', 'job'];

// ------------------------------------------------------------------------------------------------
// A reader for the YAML subset the rules file is written in: block mappings and sequences,
// plain, single- and double-quoted scalars, and literal / folded block scalars (|, >, with - or +).
// Anything else (flow collections, anchors, tags, multi-line plain scalars) is an error, so the
// file stays readable by this reader and by Prometheus alike.

export function parseYaml(text) {
  const lines = text.split('\n').map((raw, i) => ({ raw: raw.replace(/\r$/, ''), no: i + 1 }));
  let at = 0;
  const fail = (line, message) => { throw new Error(`YAML line ${line.no}: ${message}: ${line.raw.trim()}`); };
  const indentOf = (raw) => raw.match(/^ */)[0].length;
  const blank = (raw) => /^\s*(#.*)?$/.test(raw);
  // The next line with content, or undefined; skips blank and comment lines.
  const peek = () => {
    while (at < lines.length && blank(lines[at].raw)) at++;
    if (at >= lines.length) return undefined;
    const line = lines[at];
    if (/^\s*\t/.test(line.raw)) fail(line, 'tab in indentation');
    if (line.override) return line.override;
    return { line, indent: indentOf(line.raw), text: line.raw.trim() };
  };

  function scalar(text, line) {
    const s = text.trim();
    if (s === '') return null;
    if (s.startsWith('"')) {
      let out = '';
      let i = 1;
      for (; i < s.length && s[i] !== '"'; i++) {
        if (s[i] !== '\\') { out += s[i]; continue; }
        const c = s[++i];
        const simple = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/', ' ': ' ', 0: '\0' };
        if (c in simple) out += simple[c];
        else if (c === 'u') { out += String.fromCharCode(parseInt(s.slice(i + 1, i + 5), 16)); i += 4; }
        else fail(line, `unsupported escape \\${c}`);
      }
      if (i >= s.length) fail(line, 'unterminated double-quoted string');
      if (!/^\s*(#.*)?$/.test(s.slice(i + 1))) fail(line, 'text after a quoted string');
      return out;
    }
    if (s.startsWith("'")) {
      let out = '';
      let i = 1;
      for (; i < s.length; i++) {
        if (s[i] === "'") {
          if (s[i + 1] === "'") { out += "'"; i++; continue; }
          break;
        }
        out += s[i];
      }
      if (i >= s.length) fail(line, 'unterminated single-quoted string');
      if (!/^\s*(#.*)?$/.test(s.slice(i + 1))) fail(line, 'text after a quoted string');
      return out;
    }
    if (/^[[{&*!%@`]/.test(s)) fail(line, 'flow collections, anchors, aliases and tags are not supported');
    return s.replace(/\s+#.*$/, '');
  }

  // A block scalar's lines (after the `key: |` line), deeper than `parentIndent`.
  function blockScalar(header, parentIndent, line) {
    const m = header.match(/^([|>])([-+]?)\s*(#.*)?$/);
    if (!m) fail(line, `unsupported block scalar header '${header}'`);
    const [, style, chomp] = m;
    const body = [];
    let contentIndent;
    while (at < lines.length) {
      const raw = lines[at].raw;
      if (raw.trim() === '') { body.push(''); at++; continue; }
      const indent = indentOf(raw);
      if (indent <= parentIndent) break;
      contentIndent ??= indent;
      if (indent < contentIndent) fail(lines[at], 'less indented than the block scalar');
      body.push(raw.slice(contentIndent));
      at++;
    }
    let trailing = 0;
    while (body.length && body[body.length - 1] === '') { body.pop(); trailing++; }
    let text;
    if (style === '|') {
      text = body.join('\n');
    } else {
      text = '';
      for (let i = 0; i < body.length; i++) {
        const l = body[i];
        if (i === 0) { text = l; continue; }
        const prev = body[i - 1];
        if (l === '' || prev === '' || /^\s/.test(l) || /^\s/.test(prev)) text += '\n' + l;
        else text += ' ' + l;
      }
      text = text.replace(/\n\n/g, '\n');
    }
    if (body.length === 0) return '';
    if (chomp === '-') return text;
    if (chomp === '+') return text + '\n'.repeat(trailing + 1);
    return text + '\n';
  }

  function node(indent) {
    const next = peek();
    if (!next || next.indent < indent) return null;
    return next.text === '-' || next.text.startsWith('- ') ? sequence(next.indent) : mapping(next.indent);
  }

  // The value after `key:` (or after `- `) on `line`, whose block children are deeper than `indent`.
  function value(rest, indent, line, allowSameIndentSequence) {
    if (rest === '' || rest.startsWith('#')) {
      at++;
      const next = peek();
      if (!next) return null;
      if (next.indent > indent) return node(next.indent);
      if (allowSameIndentSequence && next.indent === indent && (next.text === '-' || next.text.startsWith('- '))) {
        return sequence(indent);
      }
      return null;
    }
    if (rest[0] === '|' || rest[0] === '>') {
      at++;
      return blockScalar(rest, indent, line);
    }
    const v = scalar(rest, line);
    at++;
    const next = peek();
    if (next && next.indent > indent) fail(next.line, 'unexpected indentation (multi-line plain scalars are not supported)');
    return v;
  }

  function mapping(indent) {
    const out = {};
    for (;;) {
      const next = peek();
      if (!next || next.indent < indent) return out;
      if (next.indent > indent) fail(next.line, 'unexpected indentation');
      if (next.text.startsWith('- ') || next.text === '-') return out;
      const m = next.text.match(/^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s'"#][^:#]*?)\s*:(?:\s+(.*))?$/);
      if (!m) fail(next.line, 'expected "key: value"');
      const key = scalar(m[1], next.line);
      if (Object.hasOwn(out, key)) fail(next.line, `duplicate key '${key}'`);
      const line = next.line;
      line.override = undefined;
      out[key] = value((m[2] ?? '').trim(), indent, line, true);
    }
  }

  function sequence(indent) {
    const out = [];
    for (;;) {
      const next = peek();
      if (!next || next.indent < indent) return out;
      if (next.indent > indent) fail(next.line, 'unexpected indentation');
      if (!(next.text.startsWith('- ') || next.text === '-')) return out;
      const rest = next.text.slice(1).trimStart();
      const itemIndent = indent + (next.text.length - rest.length);
      if (rest !== '' && /^("[^"]*"|'[^']*'|[^\s'"#[{][^:#]*?)\s*:(\s|$)/.test(rest)) {
        // "- key: value": a mapping whose first line starts after the dash.
        next.line.override = { line: next.line, indent: itemIndent, text: rest };
        out.push(mapping(itemIndent));
      } else {
        next.line.override = undefined;
        out.push(value(rest, indent, next.line, false));
      }
    }
  }

  const doc = node(0);
  const rest = peek();
  if (rest) fail(rest.line, 'unexpected content');
  return doc;
}

// ------------------------------------------------------------------------------------------------
// PromQL: a lexer and a recursive-descent parser for the whole expression language (selectors,
// ranges, subqueries, offset/@, functions, aggregations with by/without, binary operators with
// bool/on/ignoring/group_left/group_right), with value types checked as Prometheus does.

const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count',
  'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
const PARAM_AGGREGATIONS = new Set(['count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
// Argument kinds ('v' instant vector, 'm' range vector, 's' scalar, 'str' string; '?' optional,
// '*' repeated) and the result kind.
const FUNCTIONS = {
  abs: ['v', 'v'], absent: ['v', 'v'], absent_over_time: ['m', 'v'], acos: ['v', 'v'],
  asin: ['v', 'v'], atan: ['v', 'v'], avg_over_time: ['m', 'v'], ceil: ['v', 'v'],
  changes: ['m', 'v'], clamp: ['v s s', 'v'], clamp_max: ['v s', 'v'], clamp_min: ['v s', 'v'],
  cos: ['v', 'v'], count_over_time: ['m', 'v'], day_of_month: ['v?', 'v'],
  day_of_week: ['v?', 'v'], day_of_year: ['v?', 'v'], days_in_month: ['v?', 'v'],
  deg: ['v', 'v'], delta: ['m', 'v'], deriv: ['m', 'v'], exp: ['v', 'v'], floor: ['v', 'v'],
  histogram_quantile: ['s v', 'v'], holt_winters: ['m s s', 'v'], hour: ['v?', 'v'],
  idelta: ['m', 'v'], increase: ['m', 'v'], irate: ['m', 'v'],
  label_join: ['v str str str*', 'v'], label_replace: ['v str str str str', 'v'],
  last_over_time: ['m', 'v'], ln: ['v', 'v'], log10: ['v', 'v'], log2: ['v', 'v'],
  max_over_time: ['m', 'v'], min_over_time: ['m', 'v'], minute: ['v?', 'v'], month: ['v?', 'v'],
  predict_linear: ['m s', 'v'], present_over_time: ['m', 'v'], quantile_over_time: ['s m', 'v'],
  rad: ['v', 'v'], rate: ['m', 'v'], resets: ['m', 'v'], round: ['v s?', 'v'], scalar: ['v', 's'],
  sgn: ['v', 'v'], sin: ['v', 'v'], sort: ['v', 'v'], sort_desc: ['v', 'v'], sqrt: ['v', 'v'],
  stddev_over_time: ['m', 'v'], stdvar_over_time: ['m', 'v'], sum_over_time: ['m', 'v'],
  tan: ['v', 'v'], time: ['', 's'], timestamp: ['v', 'v'], vector: ['s', 'v'], year: ['v?', 'v'],
};
// Functions that read a counter (or a histogram's _bucket/_sum/_count) correctly.
const COUNTER_FUNCTIONS = new Set(['rate', 'irate', 'increase', 'resets']);
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool',
  'offset', 'and', 'or', 'unless', 'atan2']);

function lex(src) {
  const tokens = [];
  let i = 0;
  const fail = (message) => { throw new Error(`PromQL: ${message} at offset ${i}: ${src}`); };
  while (i < src.length) {
    const rest = src.slice(i);
    let m;
    if ((m = rest.match(/^\s+/))) { i += m[0].length; continue; }
    if (rest[0] === '#') { const nl = rest.indexOf('\n'); i += nl < 0 ? rest.length : nl; continue; }
    if ((m = rest.match(/^(\d+(ms|[smhdwy]))+(?![\w.])/))) {
      tokens.push({ t: 'dur', v: m[0], at: i }); i += m[0].length; continue;
    }
    if ((m = rest.match(/^(0x[0-9a-fA-F]+|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)(?![\w.])/))) {
      tokens.push({ t: 'num', v: Number(m[0]), at: i }); i += m[0].length; continue;
    }
    if ((m = rest.match(/^[a-zA-Z_][a-zA-Z0-9_:]*/))) {
      tokens.push({ t: 'id', v: m[0], at: i }); i += m[0].length; continue;
    }
    if (rest[0] === '"' || rest[0] === "'" || rest[0] === '`') {
      const q = rest[0];
      let j = 1;
      let v = '';
      for (; j < rest.length && rest[j] !== q; j++) {
        if (rest[j] === '\\' && q !== '`') { v += rest[j + 1]; j++; } else v += rest[j];
      }
      if (j >= rest.length) fail('unterminated string');
      tokens.push({ t: 'str', v, at: i }); i += j + 1; continue;
    }
    if ((m = rest.match(/^(==|!=|>=|<=|=~|!~|[-+*/%^<>=(){}\[\],:@])/))) {
      tokens.push({ t: 'op', v: m[0], at: i }); i += m[0].length; continue;
    }
    fail(`unexpected character '${rest[0]}'`);
  }
  tokens.push({ t: 'eof', v: '', at: src.length });
  return tokens;
}

export function parsePromQL(src) {
  const tokens = lex(src);
  let p = 0;
  const peek = (k = 0) => tokens[p + k];
  const fail = (message, token = peek()) => {
    throw new Error(`PromQL: ${message} at offset ${token.at} ('${src.slice(token.at, token.at + 20)}'): ${src.replace(/\s+/g, ' ').trim()}`);
  };
  const isOp = (v, token = peek()) => token.t === 'op' && token.v === v;
  const isId = (v, token = peek()) => token.t === 'id' && token.v === v;
  const expect = (v) => { if (!isOp(v)) fail(`expected '${v}'`); return tokens[p++]; };

  function labelList() {
    expect('(');
    const labels = [];
    while (!isOp(')')) {
      if (peek().t !== 'id') fail('expected a label name');
      labels.push(tokens[p++].v);
      if (!isOp(',')) break;
      p++;
    }
    expect(')');
    return labels;
  }

  const LEVELS = [['or'], ['and', 'unless'], ['==', '!=', '<=', '<', '>=', '>'], ['+', '-'],
                  ['*', '/', '%', 'atan2']];
  const COMPARISONS = new Set(['==', '!=', '<=', '<', '>=', '>']);
  const SET_OPS = new Set(['and', 'or', 'unless']);

  function binary(level) {
    if (level === LEVELS.length) return power();
    let lhs = binary(level + 1);
    for (;;) {
      const token = peek();
      const op = token.t === 'op' || token.t === 'id' ? token.v : undefined;
      if (!LEVELS[level].includes(op) || (token.t === 'id') !== /^[a-z]/.test(op)) return lhs;
      p++;
      const node = { type: 'binary', op, lhs, bool: false };
      if (isId('bool')) {
        if (!COMPARISONS.has(op)) fail('bool is only allowed on comparisons');
        node.bool = true; p++;
      }
      if (isId('on') || isId('ignoring')) { const kind = tokens[p++].v; node[kind] = labelList(); }
      if (isId('group_left') || isId('group_right')) {
        if (SET_OPS.has(op)) fail('group modifiers are not allowed on set operators');
        if (!node.on && !node.ignoring) fail('group_left/group_right need on() or ignoring()');
        const side = tokens[p++].v === 'group_left' ? 'left' : 'right';
        node.group = { side, labels: isOp('(') ? labelList() : [] };
      }
      node.rhs = binary(level + 1);
      const lk = node.lhs.kind;
      const rk = node.rhs.kind;
      for (const k of [lk, rk]) if (k !== 's' && k !== 'v') fail(`operator ${op} needs scalars or instant vectors, got a ${k === 'm' ? 'range vector' : 'string'}`, token);
      if (SET_OPS.has(op) && (lk !== 'v' || rk !== 'v')) fail(`${op} needs instant vectors on both sides`, token);
      if (COMPARISONS.has(op) && lk === 's' && rk === 's' && !node.bool) fail('a comparison of two scalars needs bool', token);
      if ((node.on || node.ignoring) && (lk !== 'v' || rk !== 'v')) fail('vector matching needs vectors on both sides', token);
      node.kind = lk === 's' && rk === 's' ? 's' : 'v';
      lhs = node;
    }
  }

  function power() {
    const lhs = unary();
    if (!isOp('^')) return lhs;
    p++;
    const rhs = power();
    for (const side of [lhs, rhs]) if (side.kind !== 's' && side.kind !== 'v') fail('^ needs scalars or instant vectors');
    return { type: 'binary', op: '^', lhs, rhs, kind: lhs.kind === 's' && rhs.kind === 's' ? 's' : 'v' };
  }

  function unary() {
    if (isOp('-') || isOp('+')) {
      const op = tokens[p++].v;
      const expr = unary();
      if (expr.kind !== 's' && expr.kind !== 'v') fail(`unary ${op} needs a scalar or an instant vector`);
      return { type: 'unary', op, expr, kind: expr.kind };
    }
    return postfix(primary());
  }

  function duration() {
    if (peek().t !== 'dur') fail('expected a duration such as 5m');
    return tokens[p++].v;
  }

  function postfix(node) {
    for (;;) {
      if (isOp('[')) {
        p++;
        const range = duration();
        if (isOp(':')) {
          p++;
          const step = peek().t === 'dur' ? duration() : undefined;
          expect(']');
          if (node.kind !== 'v') fail('a subquery needs an instant vector');
          node = { type: 'subquery', expr: node, range, step, kind: 'm' };
        } else {
          expect(']');
          if (node.type !== 'selector' || node.range) fail('a range needs a plain vector selector (use a subquery for expressions)');
          node = { ...node, range, kind: 'm' };
        }
      } else if (isId('offset')) {
        p++;
        if (isOp('-')) p++;
        node.offset = duration();
      } else if (isOp('@')) {
        p++;
        if (peek().t === 'num') p++;
        else if ((isId('start') || isId('end')) && isOp('(', peek(1)) && isOp(')', peek(2))) p += 3;
        else fail('expected a timestamp, start() or end() after @');
      } else {
        return node;
      }
    }
  }

  function matchers() {
    expect('{');
    const list = [];
    while (!isOp('}')) {
      const name = peek();
      if (name.t !== 'id') fail('expected a label name in a matcher');
      p++;
      const op = peek();
      if (!['=', '!=', '=~', '!~'].includes(op.v) || op.t !== 'op') fail('expected =, !=, =~ or !~');
      p++;
      if (peek().t !== 'str') fail('expected a quoted label value');
      const value = tokens[p++].v;
      if (op.v.includes('~')) {
        try { new RegExp(`^(?:${value})$`); } catch (e) { fail(`bad regular expression "${value}": ${e.message}`, op); }
      }
      list.push({ label: name.v, op: op.v, value });
      if (!isOp(',')) break;
      p++;
    }
    expect('}');
    return list;
  }

  function args() {
    expect('(');
    const list = [];
    while (!isOp(')')) {
      list.push(binary(0));
      if (!isOp(',')) break;
      p++;
    }
    expect(')');
    return list;
  }

  function primary() {
    const token = peek();
    if (isOp('(')) {
      p++;
      const expr = binary(0);
      expect(')');
      return { type: 'paren', expr, kind: expr.kind };
    }
    if (token.t === 'num') { p++; return { type: 'number', value: token.v, kind: 's' }; }
    if (token.t === 'str') { p++; return { type: 'string', value: token.v, kind: 'str' }; }
    if (isOp('{')) {
      const list = matchers();
      const name = list.find((m) => m.label === '__name__' && m.op === '=');
      if (!list.some((m) => !(m.op === '=' && m.value === '') && !(m.op === '=~' && /^(\.\*)?$/.test(m.value)))) {
        fail('a selector needs at least one matcher that does not match the empty string', token);
      }
      return { type: 'selector', name: name?.value, matchers: list.filter((m) => m !== name), kind: 'v', at: token.at };
    }
    if (token.t !== 'id') fail('expected an expression');
    if (/^(inf|nan)$/i.test(token.v)) { p++; return { type: 'number', value: Number(token.v), kind: 's' }; }
    if (AGGREGATIONS.has(token.v) && (isOp('(', peek(1)) || isId('by', peek(1)) || isId('without', peek(1)))) {
      p++;
      const node = { type: 'agg', op: token.v, kind: 'v' };
      const grouping = () => {
        if (isId('by') || isId('without')) {
          if (node.by || node.without) fail('only one by/without clause');
          node[tokens[p++].v] = labelList();
        }
      };
      grouping();
      const list = args();
      grouping();
      const want = PARAM_AGGREGATIONS.has(token.v) ? 2 : 1;
      if (list.length !== want) fail(`${token.v} takes ${want} argument(s), got ${list.length}`, token);
      node.expr = list[list.length - 1];
      if (want === 2) {
        node.param = list[0];
        const paramKind = token.v === 'count_values' ? 'str' : 's';
        if (node.param.kind !== paramKind) fail(`${token.v}'s parameter must be a ${paramKind === 's' ? 'number' : 'string'}`, token);
      }
      if (node.expr.kind !== 'v') fail(`${token.v} needs an instant vector`, token);
      return node;
    }
    if (isOp('(', peek(1)) && !KEYWORDS.has(token.v)) {
      const spec = FUNCTIONS[token.v];
      if (!spec) fail(`unknown function ${token.v}()`);
      p++;
      const list = args();
      const kinds = spec[0] === '' ? [] : spec[0].split(' ');
      const min = kinds.filter((k) => !k.endsWith('?') && !k.endsWith('*')).length;
      const variadic = kinds.some((k) => k.endsWith('*'));
      if (list.length < min || (!variadic && list.length > kinds.length)) {
        fail(`${token.v}() takes ${kinds.length === min ? min : `${min} to ${kinds.length}`} argument(s), got ${list.length}`, token);
      }
      list.forEach((arg, i) => {
        const want = kinds[Math.min(i, kinds.length - 1)].replace(/[?*]$/, '');
        if (arg.kind !== want) {
          const names = { v: 'an instant vector', m: 'a range vector', s: 'a scalar', str: 'a string' };
          fail(`argument ${i + 1} of ${token.v}() must be ${names[want]}, got ${names[arg.kind]}`, token);
        }
      });
      return { type: 'call', name: token.v, args: list, kind: spec[1] };
    }
    if (KEYWORDS.has(token.v) || AGGREGATIONS.has(token.v)) fail(`unexpected keyword ${token.v}`);
    p++;
    const node = { type: 'selector', name: token.v, matchers: [], kind: 'v', at: token.at };
    if (isOp('{')) node.matchers = matchers();
    return node;
  }

  const ast = binary(0);
  if (peek().t !== 'eof') fail('unexpected text after the expression');
  if (ast.kind === 'm' || ast.kind === 'str') fail('an expression must evaluate to a scalar or an instant vector', tokens[0]);
  return ast;
}

// ------------------------------------------------------------------------------------------------
// The exposition (text format 0.0.4): families with their TYPE, HELP and the label names on
// their samples.

export function parseExposition(text) {
  const families = new Map();
  const problems = [];
  const family = (name) => {
    if (!families.has(name)) families.set(name, { name, type: undefined, help: undefined, labels: new Set(), samples: 0 });
    return families.get(name);
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m;
    if ((m = line.match(/^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/))) {
      const f = family(m[2]);
      if (m[1] === 'TYPE') {
        if (f.type) problems.push(`two TYPE lines for ${m[2]}`);
        if (f.samples) problems.push(`TYPE line for ${m[2]} after its samples`);
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3])) problems.push(`bad TYPE line: ${line}`);
        f.type = m[3];
      } else {
        f.help = m[3];
      }
      continue;
    }
    if (line.startsWith('#')) continue;
    m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/);
    if (!m) { problems.push(`unparsable sample line: ${line}`); continue; }
    const [, name, , labelText = ''] = m;
    if (Number.isNaN(Number(m[4])) && !/^[+-]?(Inf|NaN)$/.test(m[4])) problems.push(`bad value: ${line}`);
    const labels = [];
    const re = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\[\\"n])*)"\s*(,|$)/y;
    let pos = 0;
    while (pos < labelText.length) {
      re.lastIndex = pos;
      const lm = re.exec(labelText);
      if (!lm) { problems.push(`unparsable labels: ${line}`); break; }
      labels.push(lm[1]);
      pos = re.lastIndex;
    }
    let owner = families.get(name);
    if (!owner?.type) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      const histogram = families.get(base);
      if (base !== name && ['histogram', 'summary'].includes(histogram?.type)) owner = histogram;
      else { problems.push(`sample of an undeclared family (no # TYPE line): ${line}`); owner = family(name); }
    }
    owner.samples++;
    for (const l of labels) if (l !== 'le' && l !== 'quantile') owner.labels.add(l);
  }
  return { families, problems };
}

// ------------------------------------------------------------------------------------------------
// Checks one parsed expression against the exposition. Returns the families it uses and the
// problems found: a family without # TYPE, a label that is not on the family, a counter read
// without rate()/increase(), rate() over a gauge, histogram_quantile() without le.

export function checkExpression(ast, exposition) {
  const used = new Set();
  const problems = [];
  const unverified = [];
  const { families } = exposition;

  const resolve = (name) => {
    if (families.get(name)?.type) return { family: name, suffix: '' };
    const m = name.match(/^(.*)_(bucket|sum|count)$/);
    if (m && (!families.has(name) || ['histogram', 'summary'].includes(families.get(m[1])?.type))) {
      return { family: m[1], suffix: `_${m[2]}` };
    }
    return { family: name, suffix: '' };
  };

  // The label names a family's series carry, or undefined when nothing shows them yet.
  const familyLabels = (name) => {
    const f = families.get(name);
    if (!f?.type || f.samples === 0) return undefined;
    return f.labels;
  };

  const hasLabel = (family, suffix, label, where) => {
    if (TARGET_LABELS.includes(label) || label === '__name__') return;
    if (label === 'le') {
      if (suffix !== '_bucket') problems.push(`${where}: 'le' is only on ${family}_bucket`);
      return;
    }
    const f = families.get(family);
    if (!f?.type) return;  // reported as a missing family
    const labels = familyLabels(family);
    if (labels) {
      if (!labels.has(label)) problems.push(`${where}: label '${label}' is not on ${family} (its samples carry: ${[...labels].join(', ') || 'no labels'})`);
      return;
    }
    if (f.help && new RegExp(`\\b${label}\\b`).test(f.help)) return;
    unverified.push(`${family}: label '${label}' (no samples yet, not named in its HELP)`);
  };

  // The switchyard families a subexpression reads.
  const familiesIn = (node) => {
    const out = [];
    const walk = (n) => {
      if (!n || typeof n !== 'object') return;
      if (n.type === 'selector' && n.name?.startsWith('switchyard_')) out.push(resolve(n.name).family);
      for (const v of Object.values(n)) if (typeof v === 'object') walk(v);
    };
    walk(node);
    return out;
  };

  // Returns the set of label names the node's result may carry, or null when unknown.
  function visit(node, parentFunction) {
    switch (node.type) {
      case 'number':
      case 'string':
        return new Set();
      case 'paren':
      case 'unary':
        return visit(node.expr, node.type === 'paren' ? parentFunction : undefined);
      case 'selector': {
        if (!node.name || !node.name.startsWith('switchyard_')) return null;
        const { family, suffix } = resolve(node.name);
        used.add(family);
        const f = families.get(family);
        if (!f?.type) return null;
        const where = node.name;
        for (const m of node.matchers) hasLabel(family, suffix, m.label, `${where}{${m.label}${m.op}"${m.value}"}`);
        if (f.type === 'histogram' && suffix === '') problems.push(`${family} is a histogram: use ${family}_bucket, _sum or _count`);
        const cumulative = f.type === 'counter' || ((f.type === 'histogram' || f.type === 'summary') && suffix !== '');
        if (node.range) {
          if (cumulative && !COUNTER_FUNCTIONS.has(parentFunction)) {
            problems.push(`${node.name} is a ${f.type === 'counter' ? 'counter' : 'cumulative histogram series'}: read it with rate(), irate() or increase(), not ${parentFunction ?? 'a subquery'}()`);
          }
          if (!cumulative && COUNTER_FUNCTIONS.has(parentFunction)) {
            problems.push(`${node.name} is a ${f.type}: ${parentFunction}() only works on counters (use deriv(), delta() or *_over_time())`);
          }
        } else if (cumulative) {
          problems.push(`${node.name} is a counter: read it through rate() or increase(), not as a raw value`);
        }
        const labels = familyLabels(family);
        if (!labels) return null;
        const out = new Set([...labels, ...TARGET_LABELS]);
        if (suffix === '_bucket') out.add('le');
        return out;
      }
      case 'subquery':
        return visit(node.expr, undefined);
      case 'call': {
        const results = node.args.map((a) => visit(a, node.name));
        const vectorArg = node.args.findIndex((a) => a.kind === 'v' || a.kind === 'm');
        const labels = vectorArg >= 0 ? results[vectorArg] : new Set();
        if (node.name === 'histogram_quantile') {
          if (labels && !labels.has('le')) problems.push(`histogram_quantile() over a vector without 'le' (keep le in the sum by (...))`);
          const hasBucket = JSON.stringify(node.args[1]).includes('_bucket"');
          if (!hasBucket) problems.push('histogram_quantile() over a vector that reads no _bucket series');
          if (!labels) return null;
          return new Set([...labels].filter((l) => l !== 'le'));
        }
        if (node.name === 'label_replace' || node.name === 'label_join') {
          return labels ? new Set([...labels, node.args[1].value]) : null;
        }
        if (['vector', 'absent', 'absent_over_time', 'time', 'scalar'].includes(node.name)) return new Set();
        return labels;
      }
      case 'agg': {
        if (node.param) visit(node.param, undefined);
        const inner = visit(node.expr, undefined);
        for (const l of [...(node.by ?? []), ...(node.without ?? [])]) {
          if (inner && !inner.has(l)) {
            problems.push(`${node.op} ${node.by ? 'by' : 'without'} (${l}): no series inside carries '${l}' (inside: ${[...inner].join(', ')})`);
          } else if (!inner && !TARGET_LABELS.includes(l) && l !== 'le') {
            // Unknown because some family inside has no samples yet: its HELP may name the label.
            const inside = familiesIn(node.expr).filter((f) => families.get(f)?.type && !families.get(f).samples);
            if (inside.length && !inside.some((f) => new RegExp(`\\b${l}\\b`).test(families.get(f).help ?? ''))) {
              unverified.push(`${inside.join(' / ')}: label '${l}' (no samples yet, not named in its HELP)`);
            }
          }
        }
        if (['topk', 'bottomk', 'limitk', 'limit_ratio'].includes(node.op)) return inner;
        const extra = node.op === 'count_values' ? [node.param.value] : [];
        if (node.by) return new Set([...node.by, ...extra]);
        if (node.without) return inner ? new Set([...inner].filter((l) => !node.without.includes(l)).concat(extra)) : null;
        return new Set(extra);
      }
      case 'binary': {
        const lhs = visit(node.lhs, undefined);
        const rhs = visit(node.rhs, undefined);
        if (node.lhs.kind === 's') return rhs;
        if (node.rhs.kind === 's') return lhs;
        for (const [side, labels] of [['left', lhs], ['right', rhs]]) {
          for (const l of node.on ?? []) {
            if (labels && !labels.has(l)) problems.push(`on (${l}): the ${side} side of ${node.op} does not carry '${l}'`);
          }
        }
        for (const l of node.ignoring ?? []) {
          if (lhs && rhs && !lhs.has(l) && !rhs.has(l)) problems.push(`ignoring (${l}): neither side of ${node.op} carries '${l}'`);
        }
        if (node.group) {
          const other = node.group.side === 'left' ? rhs : lhs;
          for (const l of node.group.labels) {
            if (other && !other.has(l)) problems.push(`group_${node.group.side} (${l}): the ${node.group.side === 'left' ? 'right' : 'left'} side does not carry '${l}'`);
          }
          const base = node.group.side === 'left' ? lhs : rhs;
          return base ? new Set([...base, ...node.group.labels]) : null;
        }
        if (node.op === 'or') return lhs && rhs ? new Set([...lhs, ...rhs]) : null;
        return lhs;
      }
      default:
        throw new Error(`unknown node ${node.type}`);
    }
  }
  visit(ast, undefined);
  return { used, problems, unverified };
}

// ------------------------------------------------------------------------------------------------
// The rules and the dashboard, read once.

const GRAFANA_INTERVALS = /\$(__rate_interval|__interval|__range)\b|\$\{(__rate_interval|__interval|__range)\}/g;

// Every query of the dashboard: [where, PromQL] (variables' label_values() become their selector).
function dashboardQueries(dashboard) {
  const out = [];
  const walk = (panels, where) => {
    for (const panel of panels ?? []) {
      for (const target of panel.targets ?? []) {
        if (target.expr !== undefined) {
          out.push([`${where} "${panel.title}" ${target.refId}`, target.expr.replace(GRAFANA_INTERVALS, '5m')]);
        }
      }
      walk(panel.panels, `${where} "${panel.title}" >`);
    }
  };
  walk(dashboard.panels, 'panel');
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    const m = query?.match(/^\s*label_values\(\s*(.+?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$/);
    if (m) {
      // label_values(selector, label): the label must be on the selector's series.
      out.push([`variable $${variable.name}`, `count by (${m[2]}) (${m[1]})`]);
    } else {
      out.push([`variable $${variable.name}`, query]);
    }
  }
  return out;
}

const rulesText = readFileSync(RULES_FILE, 'utf8');
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));

function ruleQueries(rules) {
  const out = [];
  for (const group of rules.groups ?? []) {
    for (const rule of group.rules ?? []) {
      out.push([`rule ${group.name}/${rule.alert ?? rule.record}`, rule.expr]);
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// The gateway under test.

const MASTER = 'deploy-master-key-0123456789';
const APP_KEY = 'sk-deploy-app-0123456789abcdef';
const TINY_KEY = 'sk-deploy-tiny-0123456789abcdef';
const haveRedis = spawnSync('redis-server', ['--version']).status === 0;
let mock;
let tightMock;
let redis;
let gateway;
let scrape;
let exposition;
const answers = {};

const dep = (base, name, extra = '') => `{name: ${name}, model: ${name}, api_base: "${base}/v1"${extra}}`;

before(async () => {
  mock = await startMock();
  tightMock = await startMock(['--limits', 'rpm=60']);
  if (haveRedis) redis = await startRedis();
  const m = mock.base;
  await mock.scenario([
    { match: { model: 'chat-a' }, fault: 'status=500', times: 1 },           // moves to chat-b: a retry
    { match: { model: 'solo-a' }, fault: 'status=503', times: 1 },           // backoff, then the same one
    { match: { model: 'ra-a' }, fault: 'status=429; retry_after=0.2', times: 1 },  // waits retry-after
    { match: { model: 'primary-a' }, fault: 'status=500' },                  // answered by its fallback
    { match: { model: 'capped-a' }, fault: 'error=insufficient_quota' },     // spend cap: disabled
  ]);
  // A scheduled fallback drill (docs/drills.md) fills the drill families; its model is its own,
  // so no scenario rule above is spent on it.
  const cases = path.join(tempDir(), 'cases.jsonl');
  writeFileSync(cases, `${JSON.stringify({ id: 'greets', request: { messages: [{ role: 'user', content: 'hi' }] }, expect: { contains: 'Mock reply' } })}\n`);
  gateway = await startGateway(`
server: {master_key: os.environ/MASTER}
drills: [{group: drilled, cases: ${cases}, every: 1h}]
${haveRedis ? `state: {backend: redis, url: "${redis.url}", key_prefix: "deploy${Date.now()}:", timeout_ms: 200}` : ''}
retry: {base_ms: 5, cap_ms: 20, class_retries: {server_error: 1, overloaded: 1, rate_limited: 1}}
health: {allowed_fails: 1000, breaker: {consecutive_failures: 1000, minimum_calls: 100000}}
keys:
  - {name: app, key: os.environ/APP_KEY}
  - {name: tiny, key: os.environ/TINY_KEY, rpm: 1}
models:
  - name: chat
    strategy: priority
    deployments:
      - ${dep(m, 'chat-a', ', input_price: 2, output_price: 8')}
      - ${dep(m, 'chat-b', ', input_price: 2, output_price: 8')}
  - name: solo
    deployments: [${dep(m, 'solo-a')}]
  - name: ra
    deployments: [${dep(m, 'ra-a')}]
  - name: primary
    deployments: [${dep(m, 'primary-a')}]
    fallbacks: [chat]
  - name: capped
    deployments: [${dep(m, 'capped-a')}]
    fallbacks: [chat]
  - name: tight
    deployments: [${dep(tightMock.base, 'tight-a', ', limits: {rpm: 60}')}]
  - name: embed
    mode: embeddings
    deployments: [${dep(m, 'embed-a')}]
  - name: drilled
    deployments: [${dep(m, 'drilled-a')}]
`, { env: { MASTER, APP_KEY, TINY_KEY } });

  if (haveRedis) {
    // The replica's Redis connections come up right after it listens.
    await eventually(async () => {
      const up = metricValue(await gateway.metrics(MASTER), 'switchyard_state_redis_up');
      return up === 1 || up === undefined;
    }, { what: 'the replica\'s Redis connections up', timeoutMs: 5000, intervalMs: 20 });
  }

  const auth = { authorization: `Bearer ${APP_KEY}` };
  const chat = (model, headers = {}, extra = {}) => request(gateway.port, {
    headers: { ...auth, ...headers },
    body: { model, max_tokens: 16, messages: [{ role: 'user', content: 'hello there' }], ...extra },
  });
  answers.retried = await chat('chat');
  answers.stream = await chat('chat', {}, { stream: true, stream_options: { include_usage: true } });
  answers.backoff = await chat('solo');
  answers.retryAfter = await chat('ra');
  answers.fallback = await chat('primary');
  answers.capped = await chat('capped');
  answers.sdkRetry = await chat('chat', { 'x-stainless-retry-count': '1' });
  answers.messages = await request(gateway.port, {
    path: '/v1/messages',
    headers: { 'x-api-key': APP_KEY, 'anthropic-version': '2023-06-01' },
    body: { model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] },
  });
  answers.responses = await request(gateway.port, {
    path: '/v1/responses', headers: auth, body: { model: 'chat', input: 'hello' },
  });
  answers.embeddings = await request(gateway.port, {
    path: '/v1/embeddings', headers: auth, body: { model: 'embed', input: 'hello' },
  });
  const tiny = { authorization: `Bearer ${TINY_KEY}` };
  answers.tinyFirst = await chat('chat', tiny);
  answers.tinyRefused = await chat('chat', tiny);
  // tight-a allows one request per second: the second waits for headroom, the third cannot get
  // any before its deadline and is shed.
  answers.tight = await chat('tight', { 'x-switchyard-deadline-ms': '5000' });
  answers.tightWaited = await chat('tight', { 'x-switchyard-deadline-ms': '5000' });
  answers.tightShed = await chat('tight', { 'x-switchyard-deadline-ms': '300' });
  answers.models = await request(gateway.port, { method: 'GET', path: '/v1/models', headers: auth });
  answers.live = await request(gateway.port, { method: 'GET', path: '/health/live' });
  answers.notFound = await request(gateway.port, { method: 'GET', path: '/no-such-path', headers: auth });
  answers.status = await request(gateway.port, { method: 'GET', path: '/status', headers: { authorization: `Bearer ${MASTER}` } });
  answers.metricsNoKey = await request(gateway.port, { method: 'GET', path: '/metrics' });
  answers.metricsClientKey = await request(gateway.port, { method: 'GET', path: '/metrics', headers: auth });
  // The last requests' records: a request is counted just after its answer went out, and leaves
  // the in-flight gauge after that; the scrape alone in flight means every one is counted.
  scrape = await eventually(async () => {
    const text = await gateway.metrics(MASTER);
    return metricValue(text, 'switchyard_in_flight_requests') === 1 &&
      text.includes('switchyard_drill_last_run_timestamp_seconds{group="drilled"}') && text;
  }, { what: 'the last requests\' records and the drill\'s' });
  exposition = parseExposition(scrape);
});

after(async () => {
  await gateway?.stop();
  await redis?.stop();
  await tightMock?.stop();
  await mock?.stop();
});

// ------------------------------------------------------------------------------------------------

test('the rules file has groups of alerts, each with expr, for, a severity, a summary and a description', () => {
  const rules = parseYaml(rulesText);
  assert.ok(Array.isArray(rules?.groups) && rules.groups.length > 0, 'a non-empty groups list');
  const names = new Set();
  for (const group of rules.groups) {
    assert.equal(typeof group.name, 'string', 'every group has a name');
    assert.ok(Array.isArray(group.rules) && group.rules.length > 0, `group ${group.name} has rules`);
    for (const rule of group.rules) {
      const what = `${group.name}/${rule.alert}`;
      assert.equal(typeof rule.alert, 'string', `every rule in ${group.name} is an alert`);
      assert.match(rule.alert, /^[A-Za-z][A-Za-z0-9]*$/, `${what}: alert name`);
      assert.ok(!names.has(rule.alert), `${what}: alert names are unique`);
      names.add(rule.alert);
      assert.ok(typeof rule.expr === 'string' && rule.expr.trim() !== '', `${what}: expr`);
      assert.match(String(rule.for), /^(\d+(ms|[smhdwy]))+$/, `${what}: for is a duration`);
      assert.ok(['critical', 'warning', 'info'].includes(rule.labels?.severity), `${what}: labels.severity`);
      assert.ok(typeof rule.annotations?.summary === 'string' && rule.annotations.summary.length > 10, `${what}: annotations.summary`);
      assert.ok(typeof rule.annotations?.description === 'string' && rule.annotations.description.length > 40, `${what}: annotations.description`);
      const allowed = new Set(['alert', 'expr', 'for', 'labels', 'annotations', 'keep_firing_for']);
      for (const key of Object.keys(rule)) assert.ok(allowed.has(key), `${what}: unknown field ${key}`);
    }
  }
});

test('every alert is explained in docs/operating.md', () => {
  const doc = readFileSync(OPERATING_DOC, 'utf8');
  const rules = parseYaml(rulesText);
  for (const group of rules.groups) {
    for (const rule of group.rules) {
      assert.match(doc, new RegExp(`^#+ ${rule.alert}\\s*$`, 'm'), `a heading for ${rule.alert}`);
      if (rule.annotations.runbook) {
        assert.equal(rule.annotations.runbook, `docs/operating.md#${rule.alert.toLowerCase()}`, `${rule.alert}: runbook anchor`);
      }
    }
  }
});

test('promtool accepts the rules (when promtool is installed)', (t) => {
  if (spawnSync('promtool', ['--version']).status !== 0) {
    t.skip('promtool is not installed');
    return;
  }
  const run = spawnSync('promtool', ['check', 'rules', RULES_FILE], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
});

test('the dashboard is a Grafana dashboard with a templated Prometheus data source and group and deployment variables', () => {
  assert.equal(dashboard.schemaVersion, 39);
  assert.equal(typeof dashboard.title, 'string');
  assert.ok(dashboard.__inputs?.some((i) => i.name === 'DS_PROMETHEUS' && i.pluginId === 'prometheus'), '__inputs has DS_PROMETHEUS');
  const variables = Object.fromEntries((dashboard.templating?.list ?? []).map((v) => [v.name, v]));
  assert.equal(variables.datasource?.type, 'datasource');
  assert.equal(variables.datasource?.query, 'prometheus');
  for (const name of ['model_group', 'deployment']) {
    const query = variables[name]?.query?.query ?? variables[name]?.query;
    assert.match(String(query), new RegExp(`^label_values\\(.*, ${name}\\)$`), `variable ${name}`);
  }
  const ids = new Set();
  const rows = [];
  const walk = (panels) => {
    for (const panel of panels ?? []) {
      assert.ok(!ids.has(panel.id), `panel ids are unique (${panel.id})`);
      ids.add(panel.id);
      assert.ok(panel.gridPos && panel.gridPos.w > 0 && panel.gridPos.x + panel.gridPos.w <= 24, `"${panel.title}": gridPos`);
      if (panel.type === 'row') {
        rows.push(panel.title);
        walk(panel.panels);
        continue;
      }
      assert.ok(panel.title && panel.description, `every panel has a title and a description (${panel.title})`);
      assert.deepEqual(panel.datasource, { type: 'prometheus', uid: '${datasource}' }, `"${panel.title}": data source`);
      assert.ok(panel.targets?.length > 0, `"${panel.title}": queries`);
      for (const target of panel.targets) {
        assert.ok(typeof target.expr === 'string' && target.refId, `"${panel.title}": target with expr and refId`);
      }
    }
  };
  walk(dashboard.panels);
  for (const row of ['Traffic', 'Resilience', 'Deployments', 'Latency', 'Keys and cost', 'Lanes', 'Shared state and tracing']) {
    assert.ok(rows.includes(row), `row ${row}`);
  }
});

test('every rule and dashboard query is valid PromQL', () => {
  const bad = [];
  const queries = [...ruleQueries(parseYaml(rulesText)), ...dashboardQueries(dashboard)];
  assert.ok(queries.length > 40, `${queries.length} queries`);
  for (const [where, expr] of queries) {
    try { parsePromQL(expr); } catch (e) { bad.push(`${where}: ${e.message}`); }
  }
  assert.deepEqual(bad, []);
});

test('/metrics needs the master key once client keys exist', () => {
  assert.equal(answers.metricsNoKey.status, 401, answers.metricsNoKey.body);
  assert.equal(answers.metricsClientKey.status, 401, answers.metricsClientKey.body);
  assert.deepEqual(exposition.problems, [], 'the exposition parses and every sample has a family');
});

test('the traffic reached what it was meant to exercise', () => {
  for (const name of ['retried', 'stream', 'backoff', 'retryAfter', 'fallback', 'capped', 'sdkRetry',
                      'messages', 'responses', 'embeddings', 'tinyFirst', 'tight', 'tightWaited',
                      'models', 'live', 'status']) {
    assert.equal(answers[name].status, 200, `${name}: ${answers[name].body}`);
  }
  assert.equal(answers.retried.headers['x-switchyard-deployment'], 'chat-b');
  assert.equal(answers.fallback.headers['x-switchyard-fallback-depth'], '1');
  assert.equal(answers.tinyRefused.status, 429);
  assert.equal(answers.tightShed.status, 429);
  assert.match(answers.tightShed.body, /upstream_headroom_exhausted/);
  assert.equal(answers.notFound.status, 404);
});

test('every metric family the rules and the dashboard use is exposed, with the labels they use', (t) => {
  const queries = [...ruleQueries(parseYaml(rulesText)), ...dashboardQueries(dashboard)];
  const usedBy = new Map();
  const problems = [];
  const unverified = new Set();
  for (const [where, expr] of queries) {
    const result = checkExpression(parsePromQL(expr), exposition);
    for (const family of result.used) {
      if (!usedBy.has(family)) usedBy.set(family, []);
      usedBy.get(family).push(where);
    }
    for (const p of result.problems) problems.push(`${where}: ${p}`);
    for (const u of result.unverified) unverified.add(u);
  }
  const missing = [...usedBy.keys()]
    .filter((family) => !exposition.families.get(family)?.type)
    .filter((family) => haveRedis || family !== 'switchyard_state_redis_up')  // only with Redis
    .sort();
  for (const u of unverified) t.diagnostic(`not verifiable yet: ${u}`);
  // One list, so that a run reports every missing family and every wrong label at once.
  const found = [
    ...missing.map((f) => `no # TYPE line for ${f} (used by ${usedBy.get(f).length}: ${usedBy.get(f)[0]}${usedBy.get(f).length > 1 ? ', ...' : ''})`),
    ...problems,
  ];
  assert.deepEqual(found, [], 'families missing from /metrics, and labels or functions that do not fit them');
  assert.ok(usedBy.size >= 25, `${usedBy.size} families used`);
});

test('every family the rules and the dashboard use has samples after the traffic', () => {
  // Families this gateway cannot fill: tracing is not configured, Redis answers in time.
  const cannot = new Set(['switchyard_trace_spans_exported_total', 'switchyard_trace_spans_dropped_total',
                          'switchyard_state_fallbacks_total']);
  if (!haveRedis) cannot.add('switchyard_state_redis_up');
  // With Redis the state lives there: no durable store (durable_state.test.mjs reads its samples).
  if (haveRedis) cannot.add('switchyard_state_store_up');
  const used = new Set();
  for (const [, expr] of [...ruleQueries(parseYaml(rulesText)), ...dashboardQueries(dashboard)]) {
    for (const family of checkExpression(parsePromQL(expr), exposition).used) used.add(family);
  }
  const empty = [...used].filter((f) => !cannot.has(f) && exposition.families.get(f)?.type && !exposition.families.get(f).samples);
  assert.deepEqual(empty.sort(), [], 'declared families without samples after the test traffic');
});

test('the checker catches the mistakes it exists for', () => {
  const problemsOf = (expr) => {
    const r = checkExpression(parsePromQL(expr), exposition);
    return [...r.problems, ...[...r.used].filter((f) => !exposition.families.get(f)?.type).map((f) => `missing ${f}`)];
  };
  // A misspelled family.
  assert.match(problemsOf('sum(rate(switchyard_request_total[5m]))').join(), /missing switchyard_request_total/);
  // A label the family does not carry, in a matcher and in by ().
  assert.match(problemsOf('sum(rate(switchyard_requests_total{modelgroup="x"}[5m]))').join(), /'modelgroup' is not on/);
  assert.match(problemsOf('sum by (model_groups) (rate(switchyard_requests_total[5m]))').join(), /by \(model_groups\)/);
  // le dropped before histogram_quantile, a raw counter, rate() over a gauge.
  assert.match(problemsOf('histogram_quantile(0.9, sum by (route) (rate(switchyard_request_duration_seconds_bucket[5m])))').join(), /without 'le'/);
  assert.match(problemsOf('switchyard_requests_total > 0').join(), /counter: read it through rate/);
  assert.match(problemsOf('rate(switchyard_in_flight_requests[5m])').join(), /only works on counters/);
  // Syntax and types.
  for (const bad of ['sum(rate(switchyard_requests_total[5m])', 'rate(switchyard_requests_total)',
                     'sum by (route) rate(switchyard_requests_total[5m])', 'foo_bar(switchyard_requests_total)',
                     'switchyard_requests_total{route="chat"', 'sum(switchyard_requests_total) > > 1']) {
    assert.throws(() => parsePromQL(bad), /PromQL/, bad);
  }
  // And the YAML reader refuses what it does not understand rather than misreading it.
  assert.throws(() => parseYaml('groups: [a, b]\n'), /not supported/);
  assert.deepEqual(parseYaml('a:\n  - b: 1\n    c: |\n      x\n      y\n  - d\n'), { a: [{ b: '1', c: 'x\ny\n' }, 'd'] });
});
