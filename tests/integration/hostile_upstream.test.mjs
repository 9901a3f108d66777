// Upstreams that break the rules, played by the mock's faults (docs/mock.md): interim 1xx
// responses, a late response on an idle pooled connection, a 200 whose body is no answer, a stream
// event of 50 MB, and a stream that ends in an error after a Responses stream's events. One
// tenant's answer must never reach another, and nothing an upstream sends may crash the gateway or
// grow it without bound. Regression tests, each named after what went wrong.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { startMock, startGateway, request, sleep } from './harness.mjs';

let mock;
let gateway;

const RULES = [
  { match: { model: 'interim-model' }, fault: 'interim=100,103' },
  { match: { model: 'late-model' }, fault: 'late_response_ms=50' },
  { match: { model: 'error-model' }, fault: 'body=error' },
  { match: { model: 'shape-model' }, fault: 'body=wrong_shape' },
  { match: { model: 'cut-model' }, fault: 'error_after_chunks=2' },
];

before(async () => {
  mock = await startMock();
  await mock.scenario(RULES);
  const d = (name, model) => `{name: ${name}, model: ${model}, api_base: "http://127.0.0.1:${mock.port}/v1"}`;
  // One worker: every request shares one upstream connection pool.
  gateway = await startGateway(`
retry: {base_ms: 5, cap_ms: 10}
health: {allowed_fails: 1000, breaker: {consecutive_failures: 1000, minimum_calls: 100000}}
models:
  - name: interim
    deployments: [${d('interim-dep', 'interim-model')}]
  - name: late
    deployments: [${d('late-dep', 'late-model')}]
  - name: plain
    deployments: [${d('plain-dep', 'plain-model')}]
  - name: error-200
    fallbacks: [plain]
    deployments: [${d('error-dep', 'error-model')}]
  - name: error-only
    deployments: [${d('error-only-dep', 'error-model')}]
  - name: shape-only
    deployments: [${d('shape-dep', 'shape-model')}]
  - name: cached
    cache: {serve: always, ttl_s: 600, max_entries: 10}
    deployments: [${d('cached-dep', 'cached-model')}]
  - name: cut
    deployments: [${d('cut-dep', 'cut-model')}]
`, { workers: 1 });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const chat = (model, extra = {}, headers = {}) => request(gateway.port, {
  headers,
  body: { model, messages: [{ role: 'user', content: 'Hello' }], ...extra },
});
const answerOf = (res) => JSON.parse(res.body).choices[0].message.content;

test('interim 100 and 103 responses are consumed, never relayed nor left for the next request', async () => {
  for (let i = 0; i < 3; i++) {
    const interim = await chat('interim');
    assert.equal(interim.status, 200, interim.body);
    assert.equal(answerOf(interim), 'Mock reply from interim-model.');
    // The next request on the pooled connection gets its own answer.
    const next = await chat('plain');
    assert.equal(next.status, 200, next.body);
    assert.equal(answerOf(next), 'Mock reply from plain-model.');
  }
  const stream = await chat('interim', { stream: true });
  assert.equal(stream.status, 200);
  assert.match(stream.body, /"content":" interim-model\."/);
  assert.match(stream.body, /data: \[DONE\]/);
});

test('a late response on an idle pooled connection never becomes the next request\'s answer', async () => {
  for (let i = 0; i < 3; i++) {
    const first = await chat('late', {}, { authorization: 'Bearer tenant-a' });
    assert.equal(answerOf(first), 'Mock reply from late-model.');
    // The stray response arrives 50 ms after the answer, while the connection is idle in the pool.
    await sleep(250);
    const second = await chat('plain', {}, { authorization: 'Bearer tenant-b' });
    assert.equal(second.status, 200, second.body);
    assert.equal(answerOf(second), 'Mock reply from plain-model.');
    const third = await chat('plain', {}, { authorization: 'Bearer tenant-b' });
    assert.equal(answerOf(third), 'Mock reply from plain-model.');
  }
});

test('a 200 whose body is an error object fails over; alone it is a 502, never an empty success', async () => {
  const saved = await chat('error-200');
  assert.equal(saved.status, 200, saved.body);
  assert.equal(answerOf(saved), 'Mock reply from plain-model.');
  assert.equal(saved.headers['x-switchyard-deployment'], 'plain-dep');

  const alone = await chat('error-only');
  assert.equal(alone.status, 502, alone.body);
  const error = JSON.parse(alone.body).error;
  assert.equal(error.code, 'upstream_protocol_error');
  assert.match(error.message, /answered 200 with an error object instead of an answer/);
  // Translated for an Anthropic client it stays an error, not an `end_turn` with no content.
  const anthropic = await request(gateway.port, {
    path: '/v1/messages',
    body: { model: 'error-only', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] },
  });
  assert.equal(anthropic.status, 502, anthropic.body);
  assert.equal(JSON.parse(anthropic.body).type, 'error');
  // The Responses API likewise.
  const responses = await request(gateway.port, {
    path: '/v1/responses', body: { model: 'error-only', input: 'Hi' },
  });
  assert.equal(responses.status, 502, responses.body);

  const shape = await chat('shape-only');
  assert.equal(shape.status, 502, shape.body);
  assert.match(JSON.parse(shape.body).error.message, /not an answer of its API/);
});

test('a 200 error body is never kept by the cache and replayed', async () => {
  await mock.scenario([{ match: { model: 'cached-model' }, fault: 'body=error', times: 1 },
                       ...RULES]);
  const failed = await chat('cached');
  assert.equal(failed.status, 502, failed.body);
  const next = await chat('cached');
  assert.equal(next.status, 200, next.body);
  assert.notEqual(next.headers['x-switchyard-cache'], 'hit');
  assert.equal(answerOf(next), 'Mock reply from cached-model.');
  await mock.scenario(RULES);
});

test('a Responses stream that breaks continues its sequence_number in the error event', async () => {
  const res = await request(gateway.port, {
    path: '/v1/responses', body: { model: 'cut', input: 'Hi', stream: true },
  });
  assert.equal(res.status, 200);
  const numbers = [...res.body.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
  assert.ok(numbers.length > 3, res.body);
  assert.match(res.body, /event: error\n/);
  numbers.forEach((n, i) => assert.equal(n, i, `event ${i} of ${res.body}`));
});

// Peak resident memory of a process, in MB.
const peakMb = (pid) =>
  Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+)/)[1]) / 1024;

test('one 50 MB stream event fails the attempt without 50 MB of memory per copy', async () => {
  const own = await startGateway(`
models:
  - name: huge
    deployments: [{model: huge-model, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`, { workers: 1 });
  try {
    await mock.scenario([{ match: { model: 'huge-model' }, fault: 'event_bytes=52428800' }, ...RULES]);
    const before = peakMb(own.child.pid);
    const res = await request(own.port, {
      body: { model: 'huge', stream: true, messages: [{ role: 'user', content: 'Hi' }] },
    });
    const grown = peakMb(own.child.pid) - before;
    console.log(`# a 50 MB event: the gateway's peak grew ${grown.toFixed(1)} MB`);
    assert.equal(res.status, 502, res.body.slice(0, 300));
    assert.match(JSON.parse(res.body).error.message, /larger than 8 MiB/);
    assert.ok(grown < 100, `peak grew ${grown.toFixed(1)} MB`);
    // And it still serves.
    assert.equal((await request(own.port, {
      body: { model: 'huge', messages: [{ role: 'user', content: 'Hi' }] },
    })).status, 200);
  } finally {
    await mock.scenario(RULES);
    await own.stop();
  }
});

test('numbers beyond a double are refused, not forwarded as Infinity or NaN', async () => {
  const infinite = await request(gateway.port, {
    path: '/v1/messages',
    body: '{"model":"plain","max_tokens":50,"temperature":1e400,"messages":[{"role":"user","content":"Hi"}]}',
  });
  assert.equal(infinite.status, 400, infinite.body);
  // A zero with a huge exponent is zero.
  const zero = await request(gateway.port, {
    path: '/v1/messages',
    body: '{"model":"plain","max_tokens":50,"temperature":0e777,"messages":[{"role":"user","content":"Hi"}]}',
  });
  assert.equal(zero.status, 200, zero.body);
});
