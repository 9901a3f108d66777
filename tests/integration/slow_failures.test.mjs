// Providers that fail slowly (docs/resilience.md#timeouts): a deployment that hangs or stalls its
// first token costs a request a bounded share of its deadline, never all of it, and is benched
// within a few requests; a deployment that turns slow with the rest of the chain still answers.
// Every upstream behaviour is the mock's (stall, delay_headers_ms, stall_after_chunks), over real
// sockets, and what reached each deployment is read from the mock's request log.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request } from './harness.mjs';

// One mock per test (each test changes its mock's scenario), so the tests run at once.
const mocks = {};
let gateway;

const dep = (port, name) =>
  `{name: ${name}, model: ${name}, api_base: "http://127.0.0.1:${port}/v1"}`;
// A group `name` whose deployment `name-a` falls back to the group `name-fb` (deployment
// `name-b`).
const chain = (port, name) => `
  - name: ${name}
    deployments: [${dep(port, `${name}-a`)}]
    fallbacks: [${name}-fb]
  - name: ${name}-fb
    deployments: [${dep(port, `${name}-b`)}]`;

const NAMES = ['hang', 'stall', 'slow', 'cold', 'lone'];

before(async () => {
  for (const name of NAMES) mocks[name] = await startMock();
  // The shipped timeouts and deadline; health as a cautious operator sets it.
  gateway = await startGateway(`
server: {master_key: status-key}
health: {allowed_fails: 2}
models:${NAMES.filter((name) => name !== 'lone').map((name) => chain(mocks[name].port, name)).join('')}
  - name: lone
    deployments: [${dep(mocks.lone.port, 'lone-a')}]
`);
});

after(async () => {
  await gateway?.stop();
  for (const mock of Object.values(mocks)) await mock.stop();
});

const chat = (model, { stream = false, headers = {} } = {}) =>
  request(gateway.port, { body: { model, messages: [{ role: 'user', content: 'hi' }], stream },
                          headers });
// The requests the deployment `model` (`<test>-a` or `<test>-b`) received.
const hits = async (model) =>
  (await mocks[model.split('-')[0]].stats()).requests.filter((r) => r.model === model).length;
const scenario = (name, rules) => mocks[name].scenario(rules);

// `count` answers of `model` at 150 ms each: a normal history.
async function history(model, count, { stream = false } = {}) {
  await scenario(model, [{ match: { model: `${model}-a` }, fault: 'delay_headers_ms=150' }]);
  for (let i = 0; i < count; i++) {
    const res = await chat(model, { stream });
    assert.equal(res.status, 200, res.body);
    assert.equal(res.headers['x-switchyard-deployment'], `${model}-a`);
  }
}

// Sends `count` requests one after another; each one's status, server and time.
async function timed(model, count, options) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const started = Date.now();
    const res = await chat(model, options);
    out.push({ status: res.status, by: res.headers['x-switchyard-deployment'],
               attempts: Number(res.headers['x-switchyard-attempts']), ms: Date.now() - started,
               body: res.body });
  }
  return out;
}

// Independent deployments, mocks and model groups: the four run at once.
describe('slow failures', { concurrency: true }, () => {
  test('a deployment that starts hanging after a normal history costs the next request ~2 s, and at most 3 requests reach it', async () => {
    await history('hang', 30);
    // /status shows what the deployment's latency model learnt.
    const res = await request(gateway.port, { method: 'GET', path: '/status',
                                              headers: { authorization: 'Bearer status-key' } });
    const learnt = JSON.parse(res.body).deployments.find((d) => d.name === 'hang-a').latency_ms;
    assert.equal(learnt.samples.whole, 30);
    assert.ok(learnt.whole_answer.p99 >= 150 && learnt.whole_answer.p99 < 400,
              JSON.stringify(learnt));
    assert.equal(learnt.first_token.p99, null);
    const metrics = await gateway.metrics('status-key');
    const p99 = metrics.match(/switchyard_deployment_latency_seconds\{deployment="hang-a",measure="whole_answer",quantile="0\.99"\} ([\d.]+)/);
    assert.ok(p99 && Number(p99[1]) >= 0.15 && Number(p99[1]) < 0.4, metrics);
    await scenario('hang', [{ match: { model: 'hang-a' }, fault: 'stall=1' }]);
    const before = await hits('hang-a');
    const results = await timed('hang', 6);
    for (const r of results) {
      assert.equal(r.status, 200, r.body);
      assert.equal(r.by, 'hang-b');
    }
    // Three times its 150 ms p99 is under the 2 s floor: cut at 2 s, then the fallback.
    assert.ok(results[0].ms >= 1900 && results[0].ms < 3000, `first request took ${results[0].ms} ms`);
    const reached = (await hits('hang-a')) - before;
    assert.ok(reached <= 3, `${reached} requests reached the hanging deployment`);
    // Benched: the later requests go straight to the fallback.
    for (const r of results.slice(3)) {
      assert.ok(r.ms < 1000, `a request after the bench took ${r.ms} ms`);
      assert.equal(r.attempts, 1);
    }
  });

  test('a stream whose first token stalls after a normal history costs the next request ~2 s', async () => {
    await history('stall', 30, { stream: true });
    await scenario('stall', [{ match: { model: 'stall-a' }, fault: 'stall_after_chunks=0' }]);
    const before = await hits('stall-a');
    const results = await timed('stall', 6, { stream: true });
    for (const r of results) {
      assert.equal(r.status, 200, r.body);
      assert.equal(r.by, 'stall-b');
      assert.match(r.body, /data: \[DONE\]/);
    }
    assert.ok(results[0].ms < 3000, `first request took ${results[0].ms} ms`);
    const reached = (await hits('stall-a')) - before;
    assert.ok(reached <= 3, `${reached} requests reached the stalling deployment`);
  });

  test('every deployment uniformly 2.5 s slower than its history: all answered, at most 2 upstream calls each', async () => {
    await history('slow', 30);
    await scenario('slow', [{ match: { model: 'slow-a' }, fault: 'delay_headers_ms=2500' },
                            { match: { model: 'slow-b' }, fault: 'delay_headers_ms=2500' }]);
    const results = await timed('slow', 10);
    for (const r of results) {
      assert.equal(r.status, 200, r.body);
      assert.ok(r.attempts <= 2, `${r.attempts} attempts`);
    }
  });

  test('with no history at all, a hanging deployment leaves its fallback half the deadline and is benched', async () => {
    await scenario('cold', [{ match: { model: 'cold-a' }, fault: 'stall=1' }]);
    // A per-request deadline of 3 s: without history the first deployment gets an equal share.
    const deadline = { 'x-switchyard-deadline-ms': '3000' };
    const results = await timed('cold', 5, { headers: deadline });
    for (const r of results) {
      assert.equal(r.status, 200, r.body);
      assert.equal(r.by, 'cold-b');
    }
    assert.ok(results[0].ms >= 1400 && results[0].ms < 2500, `first request took ${results[0].ms} ms`);
    // allowed_fails 2: three cuts in a row bench it; the rest go straight to the fallback.
    assert.equal(await hits('cold-a'), 3);
    assert.ok(results[4].ms < 1000, `the request after the bench took ${results[4].ms} ms`);
  });

  test('a first token cut by its own limit, not by the deadline, counts against the deployment', async () => {
    await scenario('lone', [{ match: { model: 'lone-a' }, fault: 'stall_after_chunks=0' }]);
    // The deadline (3 s) is shorter than head + first token, but the first-token limit (500 ms,
    // from the chunk header) ends each wait first: the deployment's timeouts, not the request's.
    const started = Date.now();
    const res = await chat('lone', { stream: true, headers: { 'x-switchyard-deadline-ms': '3000',
                                                              'x-switchyard-timeout-chunk-ms': '500' } });
    assert.ok(Date.now() - started < 2900, `took ${Date.now() - started} ms`);
    assert.notEqual(res.status, 200, res.body);
    const status = await request(gateway.port, { method: 'GET', path: '/status',
                                                 headers: { authorization: 'Bearer status-key' } });
    const lone = JSON.parse(status.body).deployments.find((d) => d.name === 'lone-a');
    assert.equal(lone.last_error_class, 'timeout', JSON.stringify(lone));
  });
});
