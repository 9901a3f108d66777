// Upstream headroom and lanes against a mock that enforces real limits: buckets learned from the
// provider's headers, requests queued instead of failed, batch yielding to interactive, and the
// burst figure — upstream 429s and failed interactive requests with self-throttling and lanes on
// versus off, under the same load.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, sleep } from './harness.mjs';

const MASTER = 'test-master-key-0123456789';
let mock;

before(async () => {
  mock = await startMock(['--threads', '2']);
});

after(async () => {
  await mock?.stop();
});

async function setLimits(limits) {
  const r = await fetch(`${mock.base}/mock/limits`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(limits),
  });
  assert.equal(r.status, 200, await r.text());
  await mock.reset();
}

const gatewayFor = (extra, { models = '' } = {}) => startGateway(`
server: {master_key: os.environ/MASTER}
retry: {base_ms: 50, cap_ms: 500}
health: {allowed_fails: 1000, breaker: {consecutive_failures: 1000, minimum_calls: 100000}}
${extra}
models:
  - name: chat
    deployments: [{name: chat-dep, model: chat-model, api_base: "${mock.base}/v1"${models}}]
  - name: claude
    deployments: [{name: claude-dep, provider: anthropic, model: claude-model, api_base: "${mock.base}/v1"}]
`, { env: { MASTER } });

const chat = (gateway, lane, deadline) => request(gateway.port, {
  headers: { 'x-switchyard-lane': lane, 'x-switchyard-deadline-ms': String(deadline) },
  body: { model: 'chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
});

test('a deployment without configured limits learns them from the headers', async () => {
  await setLimits({ rpm: 120, itpm: 60000, otpm: 120000 });
  const gateway = await gatewayFor('');
  try {
    const status = async () => JSON.parse((await request(gateway.port, {
      method: 'GET', path: '/status', headers: { authorization: `Bearer ${MASTER}` },
    })).body);
    const before = (await status()).deployments.find((d) => d.name === 'chat-dep');
    assert.equal(before.buckets.requests, null, 'unknown limits are unlimited');
    assert.equal((await chat(gateway, 'interactive', 5000)).status, 200);
    const learned = (await status()).deployments.find((d) => d.name === 'chat-dep');
    // 120 per minute enforced over one second: a bucket of 2.
    assert.equal(learned.buckets.requests.capacity, 2);
    assert.ok(learned.buckets.requests.level < 2);
    const anthropic = await request(gateway.port, {
      path: '/v1/messages',
      headers: { 'anthropic-version': '2023-06-01' },
      body: { model: 'claude', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] },
    });
    assert.equal(anthropic.status, 200);
    const claude = (await status()).deployments.find((d) => d.name === 'claude-dep');
    assert.equal(claude.buckets.input_tokens.capacity, 1000);
    assert.equal(claude.buckets.output_tokens.capacity, 2000);
    assert.equal(claude.buckets.tokens, null);
  } finally {
    await gateway.stop();
  }
});

test('with headroom short, requests queue instead of failing: no upstream 429', async () => {
  await setLimits({ rpm: 60 });
  const gateway = await gatewayFor('', { models: ', limits: {rpm: 60}' });
  try {
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => chat(gateway, 'interactive', 10000)));
    const elapsed = Date.now() - started;
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200]);
    // One per second: the fourth could not go before +3 s.
    assert.ok(elapsed >= 2900, `served in ${elapsed} ms`);
    const stats = await mock.stats();
    assert.equal(stats.rate_limited.total, 0);
    assert.equal(stats.requests.length, 4);
  } finally {
    await gateway.stop();
  }
});

test('a request whose deadline ends before headroom returns is shed with 429 and retry-after', async () => {
  await setLimits({ rpm: 60 });
  const gateway = await gatewayFor('', { models: ', limits: {rpm: 60}' });
  try {
    assert.equal((await chat(gateway, 'interactive', 5000)).status, 200);
    const shed = await chat(gateway, 'batch', 300);
    assert.equal(shed.status, 429);
    const error = JSON.parse(shed.body).error;
    assert.equal(error.code, 'upstream_headroom_exhausted');
    assert.match(error.message, /'batch' lane/);
    assert.ok(Number(shed.headers['retry-after']) >= 1);
    assert.equal((await mock.stats()).requests.length, 1, 'the shed request never went upstream');
  } finally {
    await gateway.stop();
  }
});

// The burst: 12 interactive and 36 batch requests at once against a 600 RPM deployment (10 per
// second). Interactive requests may take 6 s, batch ones 3 s.
async function burst(gateway) {
  const started = Date.now();
  const runs = [];
  for (let i = 0; i < 36; ++i) runs.push(chat(gateway, 'batch', 3000).then((a) => ['batch', a]));
  for (let i = 0; i < 12; ++i) {
    runs.push(chat(gateway, 'interactive', 6000).then((a) => ['interactive', a]));
  }
  const answers = await Promise.all(runs);
  const seconds = (Date.now() - started) / 1000;
  const failed = (lane) => answers.filter(([l, a]) => l === lane && a.status !== 200).length;
  const stats = await mock.stats();
  return {
    upstream_429: stats.rate_limited.total,
    upstream_requests: stats.requests.length,
    interactive_failed: failed('interactive'),
    batch_failed: failed('batch'),
    seconds,
  };
}

test('burst figure: self-throttling and lanes on vs off', async () => {
  await setLimits({ rpm: 600 });
  const on = await gatewayFor('limits: {self_throttle: true}', { models: ', limits: {rpm: 600}' });
  let withLanes;
  try {
    withLanes = await burst(on);
  } finally {
    await on.stop();
  }
  await setLimits({ rpm: 600 });
  const off = await gatewayFor('limits: {self_throttle: false}');
  let without;
  try {
    without = await burst(off);
  } finally {
    await off.stop();
  }
  console.log(`# burst of 12 interactive + 36 batch, 600 RPM upstream`);
  console.log(`# self-throttling and lanes on:  ${JSON.stringify(withLanes)}`);
  console.log(`# self-throttling and lanes off: ${JSON.stringify(without)}`);
  assert.equal(withLanes.interactive_failed, 0, 'every interactive request was served');
  assert.ok(withLanes.upstream_429 <= 2, `upstream 429s with throttling: ${withLanes.upstream_429}`);
  assert.ok(without.upstream_429 >= 10, `upstream 429s without throttling: ${without.upstream_429}`);
  assert.ok(without.upstream_429 > 5 * Math.max(1, withLanes.upstream_429));
});

test('a lane with slow start ramps its request rate up after idleness', async () => {
  await setLimits({ rpm: 600 });
  const gateway = await gatewayFor(`limits:
  lanes:
    - {name: interactive, share: 1}
    - {name: batch, share: 0.5}
    - {name: backfill, share: 0.5, slow_start_ms: 4000}`, { models: ', limits: {rpm: 600}' });
  try {
    const spread = async (lane) => {
      await mock.reset();
      await Promise.all(Array.from({ length: 8 }, () => chat(gateway, lane, 10000)));
      const times = (await mock.stats()).requests.map((r) => r.t_ms);
      return Math.max(...times) - Math.min(...times);
    };
    // Without a ramp, 5 go at once (half the bucket of 10) and the rest at 10 per second.
    const batch = await spread('batch');
    // With one, the lane starts at 10 % of the rate (1 per second) and grows over 4 s.
    const backfill = await spread('backfill');
    console.log(`# 8 requests spread over: batch ${batch.toFixed(0)} ms, backfill ${backfill.toFixed(0)} ms`);
    assert.ok(batch < 1000, `batch took ${batch} ms`);
    assert.ok(backfill >= 1500, `backfill took ${backfill} ms`);
  } finally {
    await gateway.stop();
  }
});

// Predictive shedding (issue figures in the README's headroom section): 12 interactive requests
// at once with a 2 s deadline against a deployment limited to 120 RPM (a bucket of 2, refilled
// 527 ms apart). Two go at once and three more fit within 2 s (at about 0.53, 1.05 and 1.58 s);
// the other seven are shed as soon as they arrive, each told when capacity for it will exist.
test('a burst past the deadline is shed at once, with spread hints that bring every one of them back in',
     async () => {
  await setLimits({ rpm: 120 });
  const gateway = await gatewayFor('', { models: ', limits: {rpm: 120}' });
  try {
    const t0 = Date.now();
    const first = await Promise.all(Array.from({ length: 12 }, () =>
      chat(gateway, 'interactive', 2000).then((a) => ({ ...a, ms: Date.now() - t0 }))));
    const served = first.filter((a) => a.status === 200);
    const shed = first.filter((a) => a.status === 429);
    assert.equal(served.length, 5, 'exactly those that fit the deadline are served');
    assert.equal(shed.length, 7);
    for (const a of shed) {
      assert.equal(JSON.parse(a.body).error.code, 'upstream_headroom_exhausted');
      assert.ok(a.ms < 250, `shed after ${a.ms} ms: at once, not at the deadline`);
    }
    const hints = shed.map((a) => Number(a.headers['retry-after-ms']));
    const repeats = Math.max(...[...new Set(hints)].map((h) => hints.filter((x) => x === h).length));
    assert.ok(repeats <= Math.max(1, Math.floor(hints.length / 4)), `hints ${hints}`);
    assert.ok(Math.min(...hints) >= 1500, `no hint before capacity for it exists: ${hints}`);
    assert.equal((await mock.stats()).rate_limited.total, 0, 'no upstream 429');

    // The shed clients come back when told to.
    const second = await Promise.all(hints.map((ms) =>
      sleep(ms).then(() => chat(gateway, 'interactive', 2000))));
    const servedAgain = second.filter((a) => a.status === 200).length;
    console.log(`first wave: ${served.length}/12 served, 7 shed within ` +
                `${Math.max(...shed.map((a) => a.ms))} ms, hints ${hints.sort((a, b) => a - b)} ms; ` +
                `second wave: ${servedAgain}/7 served`);
    // Told to come back one after the other, every one of them fits (had they come back
    // together, the bucket would again take only five).
    assert.equal(servedAgain, shed.length, `second wave ${servedAgain}/7 vs first 5/12`);
    assert.equal((await mock.stats()).rate_limited.total, 0, 'no upstream 429');
  } finally {
    await gateway.stop();
  }
});
