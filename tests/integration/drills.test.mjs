// Fallback drills (docs/drills.md): `switchyard drill` sends every case to every entry of a
// group's chain — both deployments of the group, its fallback group (with that entry's prompt and
// params), its context-window fallback — on the mock over real sockets, and gates on the answers:
// a healthy chain passes with exit 0; an entry answering 500, one answering the wrong words and
// one answering JSON that breaks the schema are each reported with what went wrong (exit 1) while
// the other entries still run. Then the same drill scheduled in a live gateway: its metrics,
// /admin/drills, and a failing entry left out of the deployment's health.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  GATEWAY_BIN, startMock, startGateway, request, metricValue, eventually, tempDir,
} from './harness.mjs';

const MASTER = 'sk-master-drills';
const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, count: { type: 'integer' } },
  required: ['name', 'count'],
  additionalProperties: false,
};
const hello = [{ role: 'user', content: 'hello there' }];
const CASES = [
  { id: 'greets', request: { messages: hello, max_tokens: 32 },
    expect: { contains: 'Mock reply', not_contains: 'error', max_latency_ms: 10000 } },
  { id: 'names-model', request: { messages: hello },
    expect: { regex: 'reply from [a-z0-9-]+\\.$', max_cost: 0.01 } },
  { id: 'structured', request: {
    messages: [{ role: 'user', content: 'a record please' }],
    response_format: { type: 'json_schema', json_schema: { name: 'record', strict: true, schema } },
  }, expect: { json_schema: schema } },
];

let mock;
let dir;
let configFile;
let casesFile;

before(async () => {
  mock = await startMock();
  dir = tempDir();
  casesFile = path.join(dir, 'cases.jsonl');
  writeFileSync(casesFile, CASES.map((c) => JSON.stringify(c)).join('\n') + '\n');
  const p = mock.port;
  configFile = path.join(dir, 'switchyard.yaml');
  writeFileSync(configFile, `
models:
  - name: chat
    strategy: priority
    deployments:
      - {name: chat-a, provider: openai, model: chat-a, api_base: "http://127.0.0.1:${p}/v1", input_price: 2, output_price: 8}
      - {name: chat-b, provider: anthropic, model: chat-b, api_key: sk-ant, api_base: "http://127.0.0.1:${p}/v1"}
    fallbacks: [backup]
    context_window_fallbacks: [long]
  - name: backup
    deployments:
      - {name: backup-a, provider: openai, model: backup-a, api_base: "http://127.0.0.1:${p}/v1"}
    prompt: {system: "You are the backup assistant."}
    params: {temperature: 0.1}
  - name: long
    deployments:
      - {name: long-a, provider: openai, model: long-a, api_base: "http://127.0.0.1:${p}/v1"}
`);
});

after(async () => {
  await mock?.stop();
});

// Runs `switchyard drill` to its end: exit code, stdout, stderr.
function drill(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(GATEWAY_BIN, ['drill', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('drill hung')); }, 60000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

async function drillReport(name) {
  const report = path.join(dir, `${name}.json`);
  const html = path.join(dir, `${name}.html`);
  const run = await drill(['--config', configFile, '--group', 'chat', '--cases', casesFile,
                           '--report', report, '--html', html]);
  return { ...run, report: JSON.parse(readFileSync(report, 'utf8')), html: readFileSync(html, 'utf8') };
}

const entryOf = (report, deployment) => report.entries.find((e) => e.deployment === deployment);

test('a healthy chain: every entry passes every case, exit 0, each sent as production would', async () => {
  await mock.scenario([]);
  await mock.reset();
  const { code, stdout, report, html } = await drillReport('healthy');
  assert.equal(code, 0, stdout);
  assert.deepEqual(report.entries.map((e) => [e.group, e.deployment, e.stage]), [
    ['chat', 'chat-a', 'primary'], ['chat', 'chat-b', 'primary'],
    ['backup', 'backup-a', 'fallback'], ['long', 'long-a', 'context_window'],
  ]);
  for (const entry of report.entries) {
    assert.equal(entry.passed, 3, `${entry.deployment}: ${JSON.stringify(entry.cases)}`);
    assert.equal(entry.failed, 0);
    for (const c of entry.cases) {
      assert.equal(c.status, 200);
      assert.equal(c.served_model, entry.deployment);  // each mock model is named as its deployment
      assert.ok(c.input_tokens > 0 && c.output_tokens > 0);
    }
  }
  assert.equal(report.passed, true);
  // Priced deployments report their cost: (input × 2 + output × 8) / 1e6.
  const priced = entryOf(report, 'chat-a').cases[0];
  assert.ok(Math.abs(priced.cost - (priced.input_tokens * 2 + priced.output_tokens * 8) / 1e6) < 1e-12);
  assert.match(stdout, /chat \/ chat-a\s+primary\s+3\/3/);
  assert.match(stdout, /chat: 4 of 4 entries passed every case/);
  assert.match(html, /Drill of chat: passed/);
  // What the mock received: 12 calls; the Anthropic entry in its own API; the fallback entry
  // with its system prompt and params; the primary entries without them.
  const stats = await mock.stats();
  assert.equal(stats.total, 12);
  assert.equal(stats.paths['/v1/messages'], 3);
  const bodies = (model) => stats.requests.filter((r) => r.model === model).map((r) => JSON.parse(r.body));
  for (const body of bodies('backup-a')) {
    assert.equal(body.messages[0].role, 'system');
    assert.equal(body.messages[0].content, 'You are the backup assistant.');
    assert.equal(body.temperature, 0.1);
    assert.equal(body.stream, undefined);
  }
  for (const body of bodies('chat-a')) {
    assert.notEqual(body.messages[0].role, 'system');
    assert.equal(body.temperature, undefined);
  }
  for (const body of bodies('chat-b')) assert.ok(body.max_tokens > 0);  // Anthropic needs it
});

test('an entry answering 500 fails every case with its error class; the others still pass; exit 1', async () => {
  await mock.scenario([{ match: { model: 'chat-b' }, fault: 'status=500' }]);
  const { code, stdout, report } = await drillReport('broken');
  assert.equal(code, 1, stdout);
  const broken = entryOf(report, 'chat-b');
  assert.equal(broken.passed, 0);
  assert.equal(broken.failed, 3);
  for (const c of broken.cases) {
    assert.equal(c.status, 500);
    assert.equal(c.error_class, 'server_error');
    assert.ok(c.error.length > 0);
  }
  for (const name of ['chat-a', 'backup-a', 'long-a']) assert.equal(entryOf(report, name).passed, 3, name);
  assert.equal(report.passed, false);
  assert.match(stdout, /FAIL chat \/ chat-b case greets: 500 server_error/);
  assert.match(stdout, /chat: 3 of 4 entries passed every case/);
});

test('200s with the wrong content or JSON breaking the schema are caught the same way', async () => {
  await mock.scenario([
    { match: { model: 'backup-a' }, fault: 'chunks=3' },  // "word1 word2 word3"
    { match: { model: 'long-a' }, fault: 'invalid_output=1' },
  ]);
  const { code, stdout, report } = await drillReport('wrong');
  assert.equal(code, 1, stdout);
  const wrong = entryOf(report, 'backup-a');
  const greets = wrong.cases.find((c) => c.id === 'greets');
  assert.equal(greets.status, 200);
  assert.equal(greets.passed, false);
  assert.equal(greets.error_class, null);
  assert.deepEqual(greets.unmet, ['does not contain "Mock reply"']);
  assert.match(wrong.cases.find((c) => c.id === 'names-model').unmet[0], /does not match/);
  const schemaBroken = entryOf(report, 'long-a');
  assert.equal(schemaBroken.failed, 1);
  const structured = schemaBroken.cases.find((c) => c.id === 'structured');
  assert.equal(structured.status, 200);
  assert.match(structured.unmet[0], /does not match the JSON schema/);
  assert.equal(entryOf(report, 'chat-a').passed, 3);
  assert.equal(entryOf(report, 'chat-b').passed, 3);
  assert.match(stdout, /FAIL backup \/ backup-a case greets: does not contain "Mock reply"/);

  // Without a json_schema expectation the answer is still checked as production checks it:
  // against the schema its request asks for.
  const implicit = path.join(dir, 'implicit.jsonl');
  writeFileSync(implicit, `${JSON.stringify({ id: 'asks-schema', request: CASES[2].request })}\n`);
  const run = await drill(['--config', configFile, '--group', 'chat', '--cases', implicit]);
  assert.equal(run.code, 1, run.stdout);
  assert.match(run.stdout, /FAIL long \/ long-a case asks-schema: does not match the request's JSON schema: /);
  assert.match(run.stdout, /chat: 3 of 4 entries passed every case/);
});

test('the cost cap: once the drill has spent it, the remaining cases are skipped, exit 1', async () => {
  await mock.scenario([]);
  const run = await drill(['--config', configFile, '--group', 'chat', '--cases', casesFile,
                           '--concurrency', '1', '--max-cost', '0.000001']);
  assert.equal(run.code, 1, run.stdout);
  // chat-a is priced: its first answer spends more than the cap; nothing starts after it.
  assert.match(run.stdout, /chat \/ chat-a\s+primary\s+1\/3/);
  assert.match(run.stdout, /FAIL chat \/ chat-b case greets: skipped: the drill's cost cap was reached/);
  assert.match(run.stdout, /chat: 0 of 4 entries passed every case/);
});

test('a config whose scheduled drill cannot run is refused, each problem at its line', async () => {
  const bad = path.join(dir, 'bad-scheduled.jsonl');
  writeFileSync(bad, '{"id":"a","request":{},"expect":{"max_cost":"cheap"}}\n');
  const check = async (name, drills) => {
    const file = path.join(dir, name);
    writeFileSync(file, readFileSync(configFile, 'utf8').replace('models:', `drills:\n${drills}models:`));
    return new Promise((resolve) => {
      const child = spawn(GATEWAY_BIN, ['check', file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      child.on('exit', (code) => resolve({ code, stderr }));
    });
  };
  // The cases file is read beside the config (a relative path) and its cases are checked.
  const cases = await check('bad-cases.yaml', '  - {group: chat, cases: bad-scheduled.jsonl, every: 10m}\n');
  assert.equal(cases.code, 1);
  assert.match(cases.stderr, /bad-cases\.yaml:3: drill cases 'bad-scheduled\.jsonl': line 1: expect\.max_cost must be a number >= 0/);
  const config = await check('bad-drills.yaml', `  - {group: chat, cases: ${casesFile}, every: 10m}
  - {group: chat, cases: ${casesFile}}
  - {group: backup, cases: ${casesFile}, every: 1x}
  - {group: long, cases: missing.jsonl}
`);
  assert.equal(config.code, 1);
  assert.match(config.stderr, /bad-drills\.yaml:4: 'chat' is drilled twice: put its cases in one file/);
  assert.match(config.stderr, /bad-drills\.yaml:5: 'every' must be a duration from 1s to 30d/);
  assert.match(config.stderr, /bad-drills\.yaml:6: cannot read the cases file 'missing\.jsonl'/);
});

test('cases that cannot run and unknown groups stop the drill with exit 2 and the line', async () => {
  const bad = path.join(dir, 'bad.jsonl');
  writeFileSync(bad, `${JSON.stringify(CASES[0])}\n{"id":"x","request":{"messages":[]},"expect":{"regex":"(?<=a)b"}}\n{"id":"greets","request":{}}\n`);
  const run = await drill(['--config', configFile, '--group', 'chat', '--cases', bad]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /bad\.jsonl:line 2: expect\.regex/);
  assert.match(run.stderr, /line 3: the id 'greets' is used twice/);
  const unknown = await drill(['--config', configFile, '--group', 'nope', '--cases', casesFile]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /no model group 'nope'/);
  const usage = await drill(['--config', configFile]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /usage: switchyard drill/);
});

test('a scheduled drill in a live gateway: metrics, /admin/drills, and no effect on health', async () => {
  await mock.scenario([{ match: { model: 'backup-a' }, fault: 'status=500' }]);
  const yaml = readFileSync(configFile, 'utf8').replace('models:', `server: {master_key: ${MASTER}}
drills:
  - {group: chat, cases: ${casesFile}, every: 1h, concurrency: 3}
models:`);
  const gateway = await startGateway(yaml);
  try {
    const auth = { authorization: `Bearer ${MASTER}` };
    const sample = (name) => `${name}{group="chat",deployment="backup-a",result="failed"}`;
    await eventually(async () => metricValue(await gateway.metrics(), sample('switchyard_drill_cases_total')) === 3,
                     { what: 'the scheduled drill to end', timeoutMs: 30000 });
    const metrics = await gateway.metrics();
    assert.equal(metricValue(metrics, 'switchyard_drill_failing_cases{group="chat",deployment="backup-a"}'), 3);
    assert.equal(metricValue(metrics, 'switchyard_drill_failing_cases{group="chat",deployment="chat-a"}'), 0);
    assert.equal(metricValue(metrics, 'switchyard_drill_cases_total{group="chat",deployment="chat-a",result="passed"}'), 3);
    const ran = metricValue(metrics, 'switchyard_drill_last_run_timestamp_seconds{group="chat"}');
    assert.ok(Math.abs(ran - Date.now() / 1000) < 60, String(ran));
    assert.match(gateway.stderr(), /drill chat: 3 of 4 entries passed every case/);

    const denied = await request(gateway.port, { method: 'GET', path: '/admin/drills' });
    assert.equal(denied.status, 401);
    const drills = await request(gateway.port, { method: 'GET', path: '/admin/drills', headers: auth });
    assert.equal(drills.status, 200);
    const [report] = JSON.parse(drills.body).drills;
    assert.equal(report.group, 'chat');
    assert.equal(entryOf(report, 'backup-a').cases[0].error_class, 'server_error');

    // The drill's three 500s are not traffic: backup-a is as healthy as before.
    const status = JSON.parse((await request(gateway.port, { method: 'GET', path: '/status', headers: auth })).body);
    const backup = status.deployments.find((d) => d.name === 'backup-a');
    assert.equal(backup.state, 'healthy');
    assert.equal(backup.last_error_class, '');
    assert.equal(metricValue(metrics, 'switchyard_upstream_attempts_total{deployment="backup-a",error_class="server_error"}'), undefined);
    // Traffic is served as usual.
    const answer = await request(gateway.port, { body: { model: 'chat', messages: hello } });
    assert.equal(answer.status, 200);
  } finally {
    await gateway.stop();
  }
});
