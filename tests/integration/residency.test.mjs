// Data residency along the whole chain: a request restricted to a region (by its header, its
// client key or the model group it asks for) is never served elsewhere — not by a fallback, not
// by a semantic fallback — and when nothing allowed remains it gets an error that names the
// constraint. Measured on the mock's request log.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startMock, startGateway, request } from './harness.mjs';

const MASTER = 'sk-master-residency-test';
const EU_KEY = 'sk-residency-eu-key-0123456789';
const OPEN_KEY = 'sk-residency-open-key-0123456789';
let mock;
let gateway;

before(async () => {
  mock = await startMock();
  const base = `http://127.0.0.1:${mock.port}/v1`;
  const d = (name, model, region) =>
    `{name: ${name}, model: ${model}, api_base: "${base}", api_key: os.environ/UPSTREAM_KEY${
      region ? `, region: ${region}` : ''}}`;
  gateway = await startGateway(`
server: {master_key: os.environ/RESIDENCY_MASTER}
retry: {base_ms: 10, cap_ms: 20}
# Every test starts from a healthy EU primary: failures never bench it here.
health: {allowed_fails: 1000, breaker: {consecutive_failures: 1000, minimum_calls: 100000}}
keys:
  - {name: eu-app, key: os.environ/EU_KEY, residency: [eu]}
  - {name: open-app, key: os.environ/OPEN_KEY}
models:
  - name: chat
    fallbacks: [backup]
    context_window_fallbacks: [long]
    deployments: [${d('chat-eu', 'eu-model', 'eu')}]
  - name: backup
    deployments: [${d('backup-us', 'us-model', 'us')}]
  - name: long
    deployments: [${d('long-us', 'us-long-model', 'us')}]
  - name: eu-only
    residency: [eu]
    fallbacks: [backup]
    deployments: [${d('eu-only-eu', 'eu-model', 'eu')}]
  - name: unplaced
    deployments: [${d('nowhere', 'plain-model')}]
`, { env: { RESIDENCY_MASTER: MASTER, EU_KEY, OPEN_KEY, UPSTREAM_KEY: 'sk-up' } });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const chat = (model, { key = OPEN_KEY, headers = {}, fault } = {}) =>
  request(gateway.port, {
    body: { model, messages: [{ role: 'user', content: 'Hello' }] },
    headers: { authorization: `Bearer ${key}`, ...(fault ? { 'x-mock-fault': fault } : {}),
               ...headers },
  });

async function calls(model) {
  return (await mock.stats()).requests.filter((r) => r.model === model).length;
}

// The primary (EU) fails; the fallback chain's next group is in the US.
async function failingPrimary() {
  await mock.scenario([{ match: { model: 'eu-model' }, fault: 'status=500' }]);
  await mock.reset();
}

test('without a constraint a failing EU primary falls back to the US', async () => {
  await failingPrimary();
  const res = await chat('chat');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-deployment'], 'backup-us');
  assert.equal(res.headers['x-switchyard-region'], 'us');
  assert.equal(await calls('us-model'), 1);
});

for (const [how, options, model] of [
  ['the request header', { headers: { 'x-switchyard-residency': 'eu' } }, 'chat'],
  ['the client key', { key: EU_KEY }, 'chat'],
  ['the model group', {}, 'eu-only'],
]) {
  test(`an EU-only request (${how}) never falls back to the US`, async () => {
    await failingPrimary();
    const res = await chat(model, options);
    assert.equal(res.status, 500, res.body);
    const message = JSON.parse(res.body).error.message;
    assert.match(message, /1 deployment\(s\) outside the allowed regions \(eu\) were not tried/);
    assert.equal(res.headers['x-should-retry'], 'false');
    assert.ok(await calls('eu-model') >= 1, 'the EU primary was tried');
    assert.equal(await calls('us-model'), 0, 'no request crossed to the US');
  });
}

test('an EU-only request is served in the EU, and a US-only one skips the EU primary', async () => {
  await mock.scenario([]);
  await mock.reset();
  const eu = await chat('chat', { headers: { 'x-switchyard-residency': 'EU' } });
  assert.equal(eu.status, 200, eu.body);
  assert.equal(eu.headers['x-switchyard-region'], 'eu');
  const us = await chat('chat', { headers: { 'x-switchyard-residency': 'us' } });
  assert.equal(us.status, 200, us.body);
  assert.equal(us.headers['x-switchyard-deployment'], 'backup-us');
  assert.equal(us.headers['x-switchyard-fallback-depth'], '1');
  assert.equal(await calls('eu-model'), 1, 'only the EU-only request reached the EU deployment');
});

test('a context-window fallback in the US is not taken by an EU-only request', async () => {
  await mock.scenario([{ match: { model: 'eu-model' }, fault: 'error=context_length' }]);
  await mock.reset();
  const open = await chat('chat');
  assert.equal(open.status, 200, open.body);
  assert.equal(open.headers['x-switchyard-deployment'], 'long-us');
  await mock.reset();
  const eu = await chat('chat', { key: EU_KEY });
  assert.equal(eu.status, 400, eu.body);
  assert.match(JSON.parse(eu.body).error.code ?? '', /context_length_exceeded/);
  assert.equal(await calls('us-long-model'), 0);
});

test('when no deployment of the chain is allowed, the answer is 403 naming the constraint', async () => {
  await mock.scenario([]);
  await mock.reset();
  for (const [model, options] of [
    ['chat', { headers: { 'x-switchyard-residency': 'apac' } }],
    ['unplaced', { key: EU_KEY }],       // a deployment without a region serves no constraint
    ['eu-only', { headers: { 'x-switchyard-residency': 'us' } }],  // eu ∩ us is nothing
  ]) {
    const res = await chat(model, options);
    assert.equal(res.status, 403, `${model}: ${res.body}`);
    const error = JSON.parse(res.body).error;
    assert.equal(error.type, 'permission_error');
    assert.equal(error.code, 'residency_not_satisfied');
    assert.match(error.message, /must be served in (apac|eu|none)/);
    assert.match(error.message, /x-switchyard-residency/);
    // The header is the parameter only when the request sent it.
    assert.equal(error.param, options.headers ? 'x-switchyard-residency' : null);
  }
  assert.equal((await mock.stats()).total, 0, 'nothing went upstream');
});

test('a malformed residency header is refused with 400 naming it', async () => {
  const res = await chat('chat', { headers: { 'x-switchyard-residency': 'eu;us' } });
  assert.equal(res.status, 400, res.body);
  assert.match(JSON.parse(res.body).error.message, /x-switchyard-residency/);
});

test('two residency headers are refused: the looser one must not win', async () => {
  await mock.reset();
  const res = await new Promise((resolve, reject) => {
    const body = JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'Hello' }] });
    const req = http.request({
      host: '127.0.0.1', port: gateway.port, method: 'POST', path: '/v1/chat/completions',
      agent: false,
      headers: [['content-type', 'application/json'], ['authorization', `Bearer ${OPEN_KEY}`],
                ['x-switchyard-residency', 'eu, us'], ['x-switchyard-residency', 'eu']],
    }, (r) => {
      let text = '';
      r.on('data', (c) => (text += c));
      r.on('end', () => resolve({ status: r.statusCode, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
  assert.equal(res.status, 400, res.body);
  assert.match(JSON.parse(res.body).error.message, /one x-switchyard-residency header/);
  assert.equal((await mock.stats()).total, 0);
});

test('/status and the access log show the region that served', async () => {
  await mock.scenario([]);
  const res = await chat('chat', { headers: { 'x-switchyard-residency': 'eu' } });
  assert.equal(res.status, 200);
  const status = await (await fetch(`${gateway.base}/status`,
                                    { headers: { authorization: `Bearer ${MASTER}` } })).json();
  const regions = Object.fromEntries(status.deployments.map((d) => [d.name, d.region]));
  assert.deepEqual(regions, { 'chat-eu': 'eu', 'backup-us': 'us', 'long-us': 'us',
                              'eu-only-eu': 'eu', nowhere: '' });
  const line = gateway.logs.filter((l) => l.deployment === 'chat-eu').at(-1);
  assert.equal(line?.region, 'eu');
});

test('a key added through the admin API keeps its residency', async () => {
  const add = await request(gateway.port, {
    path: '/admin/keys', headers: { authorization: `Bearer ${MASTER}` },
    body: { name: 'added-eu', key: 'sk-residency-added-key-0123456789', residency: ['eu'] },
  });
  assert.equal(add.status, 201, add.body);
  assert.deepEqual(JSON.parse(add.body).residency, ['eu']);
  const listed = await (await fetch(`${gateway.base}/admin/keys`,
                                    { headers: { authorization: `Bearer ${MASTER}` } })).json();
  const described = (listed.keys ?? listed).find((k) => k.name === 'eu-app');
  assert.deepEqual(described.residency, ['eu']);
  const bad = await request(gateway.port, {
    path: '/admin/keys', headers: { authorization: `Bearer ${MASTER}` },
    body: { name: 'bad', key: 'sk-residency-bad-key-0123456789', residency: ['EU West'] },
  });
  assert.equal(bad.status, 400, bad.body);
  await failingPrimary();
  const res = await chat('chat', { key: 'sk-residency-added-key-0123456789' });
  assert.equal(res.status, 500, res.body);
  assert.equal(await calls('us-model'), 0);
});
