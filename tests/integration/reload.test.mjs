// Reload without a restart: SIGHUP and POST /admin/reload read the config file again, validate
// it whole and swap it in for new requests, under load, without a failed request; an invalid file
// changes nothing; deployments that still exist keep their health.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { startMock, startGateway, sleep, eventually } from './harness.mjs';

const MASTER = 'sk-reload-master-0123456789';
let mock;
let gateway;

function config(port, extra = '') {
  const d = (model) => `{name: ${model}, model: ${model}, api_base: "http://127.0.0.1:${port}/v1"}`;
  return `server: {master_key: os.environ/RELOAD_MASTER}
retry: {base_ms: 5, cap_ms: 20}
health: {allowed_fails: 0, cooldown_ms: 60000}
models:
  - name: a
    deployments: [${d('a-one')}]
  - name: sick
    deployments: [${d('sick-model')}]
${extra}`;
}

before(async () => {
  mock = await startMock(['--threads', '2']);
  await mock.scenario([{ match: { model: 'sick-model' }, fault: 'status=503' }]);
  gateway = await startGateway(config(mock.port), { env: { RELOAD_MASTER: MASTER } });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function chat(model) {
  return new Promise((resolve) => {
    const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] });
    const req = http.request({ host: '127.0.0.1', port: gateway.port, method: 'POST', agent,
                               path: '/v1/chat/completions',
                               headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on('error', (e) => resolve({ status: 0, body: e.message }));
    req.end(body);
  });
}

async function status() {
  const r = await fetch(`${gateway.base}/status`, { headers: { authorization: `Bearer ${MASTER}` } });
  return r.json();
}

test('SIGHUP and POST /admin/reload under load: no failed request, new groups served', async () => {
  // Bench `sick` before the reload: its cooldown must survive it.
  assert.equal((await chat('sick')).status, 503);
  const sickCalls = (await mock.stats()).requests.filter((r) => r.model === 'sick-model').length;

  let running = true;
  const failures = [];
  let served = 0;
  const clients = Array.from({ length: 16 }, async () => {
    while (running) {
      const res = await chat('a');
      if (res.status !== 200) failures.push(`${res.status} ${res.body.slice(0, 200)}`);
      served += 1;
    }
  });
  await sleep(300);  // the load runs a while before the reload: the reload happens under it

  // SIGHUP: a second deployment for `a`, a new group `b`.
  writeFileSync(gateway.file, config(mock.port, `  - name: b
    deployments: [{name: b-one, model: b-one, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`).replace('deployments: [{name: a-one', `strategy: priority
    deployments: [{name: a-two, model: a-two, api_base: "http://127.0.0.1:${mock.port}/v1"}, {name: a-one`));
  gateway.child.kill('SIGHUP');
  let b;
  await eventually(async () => (b = await chat('b')).status === 200,
                   { what: 'the reloaded config to serve group b', intervalMs: 50 });
  assert.equal(b.status, 200, 'the new group serves');
  await eventually(async () => (await chat('a')).headers['x-switchyard-deployment'] === 'a-two',
                   { what: 'the new priority order of group a to apply' });
  const byA = await chat('a');
  assert.equal(byA.headers['x-switchyard-deployment'], 'a-two', 'the new priority order applies');

  // An invalid file: refused whole, the running config keeps serving.
  writeFileSync(gateway.file, config(mock.port).replace('models:', 'modles:'));
  const refused = await fetch(`${gateway.base}/admin/reload`, {
    method: 'POST', headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(refused.status, 400);
  assert.match((await refused.json()).error.message, /not reloaded.*modles/s);
  assert.equal((await chat('b')).status, 200, 'the old config still serves');

  await sleep(300);  // the load goes on a while after the refused reload
  running = false;
  await Promise.all(clients);
  agent.destroy();
  console.log(`reload under load: ${served} requests, ${failures.length} failed`);
  assert.deepEqual(failures, [], `${failures.length} of ${served} requests failed`);
  assert.ok(served > 100, `only ${served} requests under load`);
  assert.match(gateway.stderr(), /"event":"config_reloaded","trigger":"SIGHUP"/);
  assert.match(gateway.stderr(), /"event":"config_reload_refused","trigger":"admin"/);

  // The deployment that still exists kept its cooldown: no upstream call for it.
  const sick = (await status()).deployments.find((d) => d.name === 'sick-model');
  assert.equal(sick.state, 'cooling');
  assert.equal((await chat('sick')).status, 503);
  assert.equal((await mock.stats()).requests.filter((r) => r.model === 'sick-model').length,
               sickCalls);
});

test('POST /admin/reload needs the master key and answers with what it loaded', async () => {
  writeFileSync(gateway.file, config(mock.port));
  const anonymous = await fetch(`${gateway.base}/admin/reload`, { method: 'POST' });
  assert.equal(anonymous.status, 401);
  const res = await fetch(`${gateway.base}/admin/reload`, {
    method: 'POST', headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { reloaded: true, model_groups: 2, deployments: 2 });
  assert.equal((await chat('b')).status, 404, 'b is gone again');
});

test('a reload of a file whose YAML aliases expand without bound is refused; the gateway lives on',
     async () => {
  // Nine levels of nine aliases: 9^9 nodes once expanded.
  let bomb = 'a0: &a0 [x, x, x, x, x, x, x, x, x]\n';
  for (let i = 1; i <= 9; i++) {
    const p = `*a${i - 1}`;
    bomb += `a${i}: &a${i} [${Array(9).fill(p).join(', ')}]\n`;
  }
  const schema = bomb.split('\n').filter(Boolean).map((l) => `        ${l}`).join('\n');
  writeFileSync(gateway.file, config(mock.port).replace('  - name: sick', `    validation:
      schema:
        type: object
${schema}
  - name: sick`));
  gateway.child.kill('SIGHUP');
  await eventually(() => /config_reload_refused","trigger":"SIGHUP"/.test(gateway.stderr()),
                   { what: 'the reload refused' });
  assert.match(gateway.stderr(), /"event":"config_reload_refused","trigger":"SIGHUP".*YAML aliases/);
  assert.equal(gateway.child.exitCode, null, 'the gateway is still running');
  assert.equal((await chat('a')).status, 200, 'the old config still serves');
  writeFileSync(gateway.file, config(mock.port));
});

test('switchyard check refuses CR or LF in a value that reaches a header, without echoing it',
     async () => {
  const { spawnSync } = await import('node:child_process');
  const { GATEWAY_BIN, tempDir } = await import('./harness.mjs');
  const file = `${tempDir()}/crlf.yaml`;
  writeFileSync(file, `models:
  - name: a
    deployments: [{name: a, model: a, api_base: "http://127.0.0.1:1/v1", api_key: os.environ/SPLIT_KEY}]
telemetry: {otlp_endpoint: "http://127.0.0.1:1/v1/traces", headers: {x-team: "ok\\r\\nx-evil: 1"}}
`);
  const run = spawnSync(GATEWAY_BIN, ['check', file], {
    encoding: 'utf8', env: { ...process.env, SPLIT_KEY: 'sk-secret\r\nx-injected: yes' },
  });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /api_key.*control character/);
  assert.match(run.stderr, /telemetry\.headers.*control character/);
  assert.doesNotMatch(run.stderr, /sk-secret|x-injected|x-evil/);
});
