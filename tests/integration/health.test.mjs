// Deployment health: circuit breakers and cooldowns measured on the mock's own request log,
// spend caps that disable a deployment until an operator re-enables it, /status, and the
// routing strategies' distributions over many requests.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, sleep, eventually } from './harness.mjs';

const MASTER = 'test-master-key';
let mock;
let gateway;

const dep = (port, name, extra = '') =>
  `{name: ${name}, model: ${name}, api_base: "http://127.0.0.1:${port}/v1"${extra}}`;

before(async () => {
  mock = await startMock();
  const p = mock.port;
  gateway = await startGateway(`
server: {master_key: os.environ/TEST_MASTER_KEY}
alerts: {webhook_url: "http://127.0.0.1:${p}/alerts"}
retry: {base_ms: 5, cap_ms: 20, class_retries: {server_error: 1, overloaded: 1}}
health:
  allowed_fails: 1000
  breaker: {consecutive_failures: 3, open_ms: 600, success_threshold: 2, half_open_probes: 1}
models:
  - name: pair
    strategy: priority
    deployments: [${dep(p, 'pair-primary')}, ${dep(p, 'pair-secondary')}]
  - name: capped
    strategy: priority
    deployments: [${dep(p, 'capped-a')}, ${dep(p, 'capped-b')}]
  - name: cheap
    strategy: cheapest
    deployments:
      - ${dep(p, 'price-20', ', input_price: 5, output_price: 15')}
      - ${dep(p, 'price-2', ', input_price: 0.5, output_price: 1.5')}
      - ${dep(p, 'price-10', ', input_price: 2, output_price: 8')}
  - name: weighted
    deployments: [${dep(p, 'w-3', ', weight: 3')}, ${dep(p, 'w-1', ', weight: 1')}]
  - name: least
    strategy: least_in_flight
    deployments: [${dep(p, 'lif-a')}, ${dep(p, 'lif-b')}]
  - name: p2c
    strategy: power_of_two
    deployments: [${dep(p, 'p2c-a')}, ${dep(p, 'p2c-b')}, ${dep(p, 'p2c-c')}]
  - name: latency
    strategy: lowest_latency
    deployments: [${dep(p, 'lat-slow')}, ${dep(p, 'lat-fast')}]
`, { env: { TEST_MASTER_KEY: MASTER } });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const chat = (model) => request(gateway.port, { body: { model, messages: [] } });
const hits = async (model) => (await mock.stats()).requests.filter((r) => r.model === model);
const status = async () => {
  const res = await request(gateway.port, { method: 'GET', path: '/status',
                                            headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(res.status, 200, res.body);
  return Object.fromEntries(JSON.parse(res.body).deployments.map((d) => [d.name, d]));
};

test('a failing deployment trips its breaker: only probes reach it, traffic shifts, recovery closes it', async () => {
  await mock.scenario([{ match: { model: 'pair-primary' }, fault: 'status=500' }]);
  const started = Date.now();
  for (let i = 0; i < 40; i++) {
    const res = await chat('pair');
    assert.equal(res.status, 200, res.body);
    assert.equal(res.headers['x-switchyard-deployment'], 'pair-secondary');
    await sleep(25);  // paced on purpose: the 40 requests span several open periods
  }
  const elapsed = Date.now() - started;
  const primary = await hits('pair-primary');
  // 3 failures open it; then one probe per open period of 600 ms, each failing.
  const probes = primary.length - 3;
  assert.ok(primary.length >= 3, `${primary.length} attempts`);
  assert.ok(probes <= Math.ceil(elapsed / 600) + 1,
            `${probes} probes in ${elapsed} ms with open_ms 600`);
  for (let i = 3; i < primary.length; i++) {
    assert.ok(primary[i].t_ms - primary[i - 1].t_ms >= 590, 'no attempt while the breaker is open');
  }
  let s = await status();
  assert.ok(['open', 'half_open'].includes(s['pair-primary'].state), s['pair-primary'].state);
  assert.equal(s['pair-primary'].last_error_class, 'server_error');

  await mock.scenario([]);
  // The open period (600 ms from the last failed probe) runs out: the breaker lets a probe by.
  await eventually(async () => (await status())['pair-primary'].state === 'half_open',
                   { what: 'the breaker of pair-primary to turn half-open' });
  for (let i = 0; i < 4; i++) await chat('pair');  // two successful probes close it
  const served = [];
  for (let i = 0; i < 10; i++) served.push((await chat('pair')).headers['x-switchyard-deployment']);
  assert.deepEqual(new Set(served), new Set(['pair-primary']));
  s = await status();
  assert.equal(s['pair-primary'].state, 'healthy');
  assert.equal(s['pair-primary'].breaker, 'closed');
});

test('a spend cap disables the deployment until an operator re-enables it, with an alert', async () => {
  await mock.scenario([{ match: { model: 'capped-a' }, fault: 'error=insufficient_quota' }]);
  for (let i = 0; i < 6; i++) {
    const res = await chat('capped');
    assert.equal(res.status, 200, res.body);
    assert.equal(res.headers['x-switchyard-deployment'], 'capped-b');
  }
  assert.equal((await hits('capped-a')).length, 1, 'never tried again once disabled');

  const s = await status();
  assert.equal(s['capped-a'].state, 'disabled');
  assert.equal(s['capped-a'].last_error_class, 'quota_exhausted');
  const until = new Date(s['capped-a'].disabled_until);
  const now = new Date();
  const firstOfNext = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  assert.ok(Math.abs(until.getTime() - firstOfNext) < 2000, `disabled until ${until.toISOString()}`);

  // The alert is sent off the request path: wait for the webhook to receive it.
  await eventually(async () => (await mock.stats()).requests.some((r) => r.path === '/alerts'),
                   { what: 'the deployment_disabled alert at the webhook' });
  const alerts = (await mock.stats()).requests.filter((r) => r.path === '/alerts');
  assert.equal(alerts.length, 1);
  const alert = JSON.parse(alerts[0].body);
  assert.equal(alert.event, 'deployment_disabled');
  assert.equal(alert.deployment, 'capped-a');
  assert.match(gateway.stderr(), /"level":"error","event":"deployment_disabled"/);

  await mock.scenario([]);
  const denied = await request(gateway.port, { path: '/admin/deployments/capped-a/enable' });
  assert.equal(denied.status, 401);
  const enabled = await request(gateway.port, { path: '/admin/deployments/capped-a/enable',
                                                headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(enabled.status, 200, enabled.body);
  assert.equal((await chat('capped')).headers['x-switchyard-deployment'], 'capped-a');
  const unknown = await request(gateway.port, { path: '/admin/deployments/nope/enable',
                                                headers: { 'x-api-key': MASTER } });
  assert.equal(unknown.status, 404);
  // Clients percent-encode names; an invalid escape names no deployment (and breaks nothing).
  const encoded = await request(gateway.port, { path: '/admin/deployments/capped%2Da/enable',
                                                headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(encoded.status, 200, encoded.body);
  assert.equal(JSON.parse(encoded.body).enabled, 'capped-a');
  const invalid = await request(gateway.port, { path: '/admin/deployments/capped%zz/enable',
                                                headers: { authorization: `Bearer ${MASTER}` } });
  assert.equal(invalid.status, 404);
  assert.equal((await chat('capped')).status, 200);
});

test('/status needs the master key', async () => {
  const res = await request(gateway.port, { method: 'GET', path: '/status' });
  assert.equal(res.status, 401);
  const wrong = await request(gateway.port, { method: 'GET', path: '/status',
                                              headers: { authorization: 'Bearer nope' } });
  assert.equal(wrong.status, 401);
  const s = await status();
  for (const field of ['state', 'available', 'rate_limited_until', 'cooling_until', 'breaker',
                       'breaker_open_until', 'disabled_until', 'in_flight', 'ewma_ttft_ms',
                       'last_error_class', 'last_error_at', 'retry_budget_tokens']) {
    assert.ok(field in s['pair-secondary'], `status has ${field}`);
  }
  // Measured by the requests above (unmeasured is null, which `>= 0` would let through).
  const ttft = s['pair-secondary'].ewma_ttft_ms;
  assert.ok(typeof ttft === 'number' && ttft >= 0, `measured: ${ttft}`);
  assert.equal(s['pair-secondary'].in_flight, 0);
});

async function spread(model, n, concurrency) {
  const counts = {};
  for (let i = 0; i < n; i += concurrency) {
    const batch = await Promise.all(Array.from({ length: Math.min(concurrency, n - i) },
                                               () => chat(model)));
    for (const res of batch) {
      assert.equal(res.status, 200, res.body);
      const d = res.headers['x-switchyard-deployment'];
      counts[d] = (counts[d] ?? 0) + 1;
    }
  }
  return counts;
}

test('weighted: 1,000 requests split 3:1', async () => {
  const counts = await spread('weighted', 1000, 50);
  // Expected 750; the standard deviation of a binomial(1000, 0.75) is 13.7. Five of them (a
  // false alarm once in millions of runs; 3.3 failed a clean run once, at 704) still tell a 3:1
  // split from anything else: 2:1 is 667, 1:1 is 500.
  assert.ok(Math.abs(counts['w-3'] - 750) < 69, JSON.stringify(counts));
});

test('cheapest: every request to the cheapest healthy deployment, pricier ones as fallbacks', async () => {
  let counts = await spread('cheap', 200, 20);
  assert.deepEqual(counts, { 'price-2': 200 });
  await mock.scenario([{ match: { model: 'price-2' }, fault: 'status=503' }]);
  counts = await spread('cheap', 50, 10);
  assert.deepEqual(counts, { 'price-10': 50 });
  await mock.scenario([]);
});

test('least in flight: concurrent requests spread over both deployments', async () => {
  await mock.scenario([{ match: { model: 'lif-a' }, fault: 'delay_headers_ms=300' },
                       { match: { model: 'lif-b' }, fault: 'delay_headers_ms=300' }]);
  const counts = await spread('least', 40, 40);
  assert.ok(counts['lif-a'] >= 15 && counts['lif-b'] >= 15, JSON.stringify(counts));
  await mock.scenario([]);
});

test('power of two choices: under load the busiest deployment is avoided', async () => {
  await mock.scenario([{ match: { model: 'p2c-a' }, fault: 'delay_headers_ms=4000' }]);
  // Load p2c-a: some of these land there (ties at first) and stay in flight for 4 s.
  const slow = Array.from({ length: 30 }, () => request(gateway.port, {
    body: { model: 'p2c', messages: [] } }));
  // Within the 4 s these stay in flight.
  const loaded = await eventually(async () => {
    const n = (await status())['p2c-a'].in_flight;
    return n >= 3 && n;
  }, { what: 'three requests in flight on p2c-a', timeoutMs: 3000 });
  assert.ok(loaded >= 3, `p2c-a has ${loaded} in flight`);
  // Now every pair that contains p2c-a has a less loaded partner: it is never chosen.
  const counts = await spread('p2c', 30, 1);
  await Promise.all(slow);
  assert.equal((counts['p2c-b'] ?? 0) + (counts['p2c-c'] ?? 0), 30, JSON.stringify(counts));
  await mock.scenario([]);
});

test('lowest latency: the faster deployment takes the traffic once measured', async () => {
  await mock.scenario([{ match: { model: 'lat-slow' }, fault: 'delay_headers_ms=80' }]);
  await spread('latency', 10, 1);  // both get measured
  const counts = await spread('latency', 100, 1);
  assert.ok((counts['lat-fast'] ?? 0) >= 95, JSON.stringify(counts));
  await mock.scenario([]);
});

test('a cooldown benches a deployment after allowed_fails failures', async () => {
  const m = await startMock();
  await m.scenario([{ match: { model: 'cool-a' }, fault: 'status=503' }]);
  const g = await startGateway(`
retry: {base_ms: 5, cap_ms: 20, class_retries: {overloaded: 0}}
health: {allowed_fails: 2, window_ms: 10000, cooldown_ms: 800, breaker: {consecutive_failures: 1000}}
models:
  - name: cool
    strategy: priority
    deployments: [${dep(m.port, 'cool-a')}, ${dep(m.port, 'cool-b')}]
`).catch(async (error) => {
    await m.stop();
    throw error;
  });
  try {
    for (let i = 0; i < 10; i++) {
      const res = await request(g.port, { body: { model: 'cool', messages: [] } });
      assert.equal(res.status, 200, res.body);
    }
    const a = (await m.stats()).requests.filter((r) => r.model === 'cool-a');
    assert.equal(a.length, 3, 'three failures (more than allowed_fails: 2), then benched');
    // Requests go to cool-b until the 800 ms cooldown ends; the first one after it tries cool-a.
    await eventually(async () => {
      await request(g.port, { body: { model: 'cool', messages: [] } });
      return (await m.stats()).requests.filter((r) => r.model === 'cool-a').length > 3;
    }, { what: 'cool-a tried again after its cooldown', timeoutMs: 3000, intervalMs: 50 });
    const again = (await m.stats()).requests.filter((r) => r.model === 'cool-a');
    assert.equal(again.length, 4, 'tried again once the cooldown ended');
    const benchedMs = again[3].t_ms - again[2].t_ms;
    assert.ok(benchedMs >= 790, `tried again ${benchedMs} ms after the 3rd failure (cooldown 800)`);
  } finally {
    await g.stop();
    await m.stop();
  }
});
