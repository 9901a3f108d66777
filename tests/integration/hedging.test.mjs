// Hedged attempts (docs/resilience.md#hedged-attempts): with `hedge` on, an attempt that has not
// answered after the hedge delay gets a second one on the next target, the first to answer wins,
// and the loser's upstream connection is closed at once — which the mock sees (`client_closed`
// in its stats). The tail is the mock's `delay_headers_ms`, over real sockets.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, metricValue, eventually } from './harness.mjs';

let mock;
let gateway;

const dep = (name) => `{name: ${name}, model: ${name}, api_base: "http://127.0.0.1:${mock.port}/v1"}`;

before(async () => {
  mock = await startMock();
  gateway = await startGateway(`
server: {master_key: status-key}
models:
  - name: tail
    strategy: priority
    hedge: {delay: auto}
    deployments: [${dep('tail-a')}, ${dep('tail-b')}]
`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const chat = (stream = false) =>
  request(gateway.port, {
    body: { model: 'tail', messages: [{ role: 'user', content: 'hi' }], stream },
  });
// Every answer in 150 ms; `slow`: tail-a's next answers 4 s late.
const normal = [{ fault: 'delay_headers_ms=150' }];
const late = [{ match: { model: 'tail-a' }, fault: 'delay_headers_ms=4000' }, ...normal];

test('one answer in ten 4 s late: hedged, p95 of 40 requests under 1.5 s, every slow loser cancelled', async (t) => {
  // A history of 25 answers: `auto` hedges at twice the median (~300 ms), and the budget (10 % of
  // requests) has saved up.
  await mock.scenario(normal);
  for (let i = 0; i < 25; i++) assert.equal((await chat()).status, 200);
  await mock.reset();

  const times = [];
  const hedged = [];
  for (let i = 0; i < 40; i++) {
    const slow = i % 10 === 3;
    await mock.scenario(slow ? late : normal);
    const started = Date.now();
    const res = await chat();
    times.push(Date.now() - started);
    assert.equal(res.status, 200, res.body);
    if (slow) {
      assert.equal(res.headers['x-switchyard-hedged'], 'hedge-answered', `request ${i}`);
      assert.equal(res.headers['x-switchyard-deployment'], 'tail-b');
      assert.equal(JSON.parse(res.body).model, 'tail-b');
    }
    if (res.headers['x-switchyard-hedged']) hedged.push(i);
  }
  times.sort((a, b) => a - b);
  const p95 = times[Math.ceil(0.95 * times.length) - 1];
  t.diagnostic(`p50 ${times[19]} ms, p95 ${p95} ms, max ${times[39]} ms`);
  assert.ok(p95 <= 1500, `p95 ${p95} ms (sorted: ${times.join(' ')})`);
  assert.deepEqual(hedged, [3, 13, 23, 33], 'only the late answers are hedged');

  // Each late attempt was cancelled: the mock saw its client close during the delay.
  await eventually(async () => (await mock.stats()).client_closed.total >= 4,
                   { what: 'the mock to see 4 closed connections' });
  const stats = await mock.stats();
  assert.deepEqual(stats.client_closed.models, { 'tail-a': 4 });
  const metrics = await gateway.metrics('status-key');
  assert.equal(metricValue(metrics, 'switchyard_hedges_total{deployment="tail-b",result="won"}'),
               4, metrics);
});

test('a stream is hedged the same way: the hedge streams, the late attempt is cancelled', async (t) => {
  await mock.reset();
  await mock.scenario(normal);
  // The stream's own history (its time to the first token).
  for (let i = 0; i < 25; i++) assert.equal((await chat(true)).status, 200);
  await mock.scenario(late);
  const started = Date.now();
  const res = await chat(true);
  const ms = Date.now() - started;
  assert.equal(res.status, 200);
  assert.equal(res.headers['x-switchyard-hedged'], 'hedge-answered');
  assert.match(res.body, /data: \[DONE\]/);
  t.diagnostic(`hedged stream answered in ${ms} ms`);
  assert.ok(ms < 2000, `${ms} ms`);
  await eventually(async () => (await mock.stats()).client_closed.models['tail-a'] === 1,
                   { what: 'the mock to see the late stream closed' });
});
