// The attempt engine at its edges, on real sockets with the mock: the first requests of an outage
// reach a healthy fallback, an SDK retry on top of the gateway costs no extra upstream calls,
// streams that fail after their commit point bench their deployment, and a cooldown is never
// waited out inside the gateway. Measured on the mock's own request log.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, rawExchange, dechunk, sleep } from './harness.mjs';

const started = [];
after(async () => {
  for (const s of started.reverse()) await s.stop();
});

const MASTER = 'sk-master-engine-test';

async function setup(yaml, rules) {
  const mock = await startMock();
  started.push(mock);
  await mock.scenario(rules);
  const gateway = await startGateway(`server: {master_key: os.environ/ENGINE_TEST_MASTER}\n${yaml(mock.port)}`,
                                     { env: { ENGINE_TEST_MASTER: MASTER } });
  started.push(gateway);
  return { mock, gateway };
}

const deployment = (port, model) =>
  `{name: ${model}, model: ${model}, api_base: "http://127.0.0.1:${port}/v1"}`;

const chat = (gateway, model, extra = {}, headers = {}) =>
  request(gateway.port, {
    body: { model, messages: [{ role: 'user', content: 'Hello' }], ...extra }, headers,
  });

async function hits(mock, model) {
  return (await mock.stats()).requests.filter((r) => r.model === model);
}

function streamRequest(model, headers = {}) {
  const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
    `${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

function parseStream(text) {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end);
  const headers = Object.fromEntries(head.split('\r\n').slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
  }));
  const status = Number(head.match(/^HTTP\/1\.1 (\d+)/)[1]);
  if (status !== 200) return { status, headers, body: text.slice(end + 4) };
  const events = dechunk(text.slice(end + 4)).split('\n\n').filter(Boolean)
    .map((e) => e.replace(/^data: /, ''));
  return { status, headers, events };
}

test('a 529 storm on the only deployment: the first request reaches the healthy fallback', async () => {
  const { mock, gateway } = await setup((p) => `
retry: {max_attempts: 3, base_ms: 10, cap_ms: 50}
models:
  - name: a
    deployments: [${deployment(p, 'a1')}]
    fallbacks: [b]
  - name: b
    deployments: [${deployment(p, 'b1')}]
`, [{ match: { model: 'a1' }, fault: 'status=529' }]);
  const res = await chat(gateway, 'a');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'b');
  assert.equal(res.headers['x-switchyard-attempts'], '3');
  assert.equal((await hits(mock, 'a1')).length, 2, 'one retry of a: all that max_attempts allowed');
  assert.equal((await hits(mock, 'b1')).length, 1);
});

test('max_attempts 2, an SSE error event before any content: the fallback serves the stream', async () => {
  const { mock, gateway } = await setup((p) => `
retry: {max_attempts: 2, base_ms: 10, cap_ms: 50}
models:
  - name: a
    deployments: [${deployment(p, 'a1')}]
    fallbacks: [b]
  - name: b
    deployments: [${deployment(p, 'b1')}]
`, [{ match: { model: 'a1' }, fault: 'chunks=3;error_after_chunks=0;error=server_overloaded' }]);
  const r = parseStream((await rawExchange(gateway.port, streamRequest('a'))).text);
  assert.equal(r.status, 200);
  assert.equal(r.headers['x-switchyard-model-group'], 'b');
  assert.equal(r.events.at(-1), '[DONE]');
  assert.ok(!r.events.some((e) => e.includes('"error"')), 'one clean stream');
  assert.equal((await hits(mock, 'a1')).length, 1);
  assert.equal((await hits(mock, 'b1')).length, 1);
});

test('a first-token stall: the fallback gets the request after one first_token_ms, not two', async () => {
  const { mock, gateway } = await setup((p) => `
retry: {max_attempts: 2, base_ms: 10, cap_ms: 50}
timeouts: {first_token_ms: 500}
models:
  - name: a
    deployments: [${deployment(p, 'a1')}]
    fallbacks: [b]
  - name: b
    deployments: [${deployment(p, 'b1')}]
`, [{ match: { model: 'a1' }, fault: 'chunks=3;stall_after_chunks=0' }]);
  const t0 = Date.now();
  const r = parseStream((await rawExchange(gateway.port, streamRequest('a'))).text);
  const took = Date.now() - t0;
  assert.equal(r.status, 200);
  assert.equal(r.headers['x-switchyard-model-group'], 'b');
  assert.equal(r.events.at(-1), '[DONE]');
  assert.ok(took >= 480 && took < 1000, `served after ${took} ms (first_token_ms 500)`);
  assert.equal((await hits(mock, 'a1')).length, 1);
});

test('an SDK retry inside the advertised window costs no upstream call', async () => {
  const { mock, gateway } = await setup((p) => `
retry: {base_ms: 10, cap_ms: 50, deadline_ms: 1000, class_retries: {rate_limited: 1}}
models:
  - name: limited
    deployments: [${deployment(p, 'l1')}]
`, [{ match: { model: 'l1' }, fault: 'status=429;retry_after=2' }]);
  const first = await chat(gateway, 'limited');
  assert.equal(first.status, 429);
  assert.equal(first.headers['x-should-retry'], 'false', 'the SDKs must not retry on top');
  const retryAfter = Number(first.headers['retry-after']);
  // The true 2 s, spread by up to half of it so refused clients do not return together.
  assert.ok(retryAfter >= 1 && retryAfter <= 3, `retry-after: ${retryAfter} (the true 2 s)`);
  const calls = (await hits(mock, 'l1')).length;
  assert.equal(calls, 1, 'a 2 s retry-after does not fit a 1 s deadline: no second call');

  const t0 = Date.now();
  const again = await chat(gateway, 'limited', {}, { 'x-stainless-retry-count': '1' });
  assert.equal(again.status, 429);
  assert.ok(Date.now() - t0 < 200, 'answered at once');
  assert.equal(again.headers['x-should-retry'], 'false');
  assert.ok(Number(again.headers['retry-after-ms']) <= 3000);
  assert.match(JSON.parse(again.body).error.message,
               /is rate-limited; the first can serve again in \d+\.\d+ s\./);
  assert.equal((await hits(mock, 'l1')).length, calls, 'no upstream call');
});

test('streams that fail after their first content bench their deployment', async () => {
  for (const fault of ['chunks=5;error_after_chunks=2', 'chunks=5;reset_after_chunks=2']) {
    const { mock, gateway } = await setup((p) => `
retry: {base_ms: 10, cap_ms: 50}
health: {allowed_fails: 2, cooldown_ms: 60000}
models:
  - name: a
    strategy: priority
    deployments: [${deployment(p, 'broken')}, ${deployment(p, 'steady')}]
`, [{ match: { model: 'broken' }, fault }]);
    const served = [];
    for (let i = 0; i < 6; i++) {
      const r = parseStream((await rawExchange(gateway.port, streamRequest('a'))).text);
      assert.equal(r.status, 200);
      served.push(r.headers['x-switchyard-deployment']);
      const last = r.events.at(-1);
      if (r.headers['x-switchyard-deployment'] === 'broken') {
        const error = JSON.parse(last).error;
        assert.equal(error.code, 'stream_interrupted', fault);
        assert.ok(!error.message.startsWith('{'), 'a message, not raw JSON');
      } else {
        assert.equal(last, '[DONE]');
      }
    }
    // allowed_fails 2: the third failure in a row benches it.
    assert.deepEqual(served, ['broken', 'broken', 'broken', 'steady', 'steady', 'steady'], fault);
    assert.equal((await hits(mock, 'broken')).length, 3);
    const status = await (await fetch(`${gateway.base}/status`,
      { headers: { authorization: `Bearer ${MASTER}` } })).json();
    const broken = status.deployments.find((d) => d.name === 'broken');
    assert.equal(broken.state, 'cooling', fault);
    assert.equal(broken.last_error_class, fault.includes('reset') ? 'connection' : 'server_error');
  }
});

test('a cooldown is not waited out inside the gateway, and its 503 says how long it lasts', async () => {
  const { mock, gateway } = await setup((p) => `
retry: {base_ms: 10, cap_ms: 50, deadline_ms: 45000}
health: {allowed_fails: 0, cooldown_ms: 1500}
models:
  - name: only
    deployments: [${deployment(p, 'sick')}]
`, [{ match: { model: 'sick' }, fault: 'status=503;retry_after=1' }]);
  const first = await chat(gateway, 'only');
  assert.equal(first.status, 503);
  assert.equal(first.headers['x-should-retry'], 'false');
  assert.equal((await hits(mock, 'sick')).length, 1, 'benched at once: no retry into a cooldown');

  const during = await chat(gateway, 'only');
  assert.equal(during.status, 503);
  assert.match(JSON.parse(during.body).error.message, /cooling down/);
  const ms = Number(during.headers['retry-after-ms']);
  // The rest of the 1.5 s cooldown, spread by at most half of it.
  assert.ok(ms > 1000 && ms <= 2250, `retry-after-ms ${ms}: the rest of the 1.5 s cooldown`);
  assert.equal(during.headers['retry-after'], String(Math.ceil(ms / 1000)),
               'whole seconds, rounded up');
  assert.equal((await hits(mock, 'sick')).length, 1);

  await sleep(ms + 20);  // on purpose: waits what the 503 said, then the deployment is tried
  const t0 = Date.now();
  const after = await chat(gateway, 'only');
  const took = Date.now() - t0;
  assert.equal(after.status, 503);
  assert.ok(took < 500, `the first request after the cooldown answered in ${took} ms`);
  assert.equal((await hits(mock, 'sick')).length, 2, 'one attempt, then benched again');
  assert.ok(Number(after.headers['retry-after-ms']) > 1000);
});
