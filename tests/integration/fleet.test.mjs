// A fleet: two (or three) switchyard processes sharing one real redis-server, with no balancer in
// front (the tests alternate between them). Limits hold across the fleet, a deployment benched or
// disabled by one replica is skipped by the others without an upstream call, an operator's
// re-enable and keys added through the admin API reach every replica, and a Redis outage costs no
// request (docs/state.md).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { startMock, startGateway, startRedis, request, sleep, metricValue, tempDir,
         makeCertificates, eventually } from './harness.mjs';

const MASTER = 'fleet-master-key-0123456789';
const KEY = 'fleet-client-key-0123456789';
let mock;
let redis;

before(async () => {
  mock = await startMock(['--threads', '2']);
  redis = await startRedis();
});

after(async () => {
  await redis?.stop();
  await mock?.stop();
});

const auth = { authorization: `Bearer ${MASTER}` };

// A replica's config: every replica of a test gets the same text.
const fleetConfig = ({ keys = '', health = '', limits = '', models = '', timeout = 200 } = {}) => `
server: {master_key: os.environ/MASTER}
state: {backend: redis, url: "${redis.url}", key_prefix: "t${Date.now()}:", timeout_ms: ${timeout}}
retry: {base_ms: 5, cap_ms: 20}
${health}
${limits}
${keys}
models:
  - name: chat
    strategy: priority
    deployments:
      - {name: chat-a, model: chat-a, api_base: "${mock.base}/v1"${models}}
      - {name: chat-b, model: chat-b, api_base: "${mock.base}/v1"}
  - name: solo
    deployments: [{name: solo-a, model: solo-a, api_base: "${mock.base}/v1"${models}}]
`;

async function startFleet(n, options) {
  const yaml = fleetConfig(options);
  const replicas = [];
  for (let i = 0; i < n; ++i) {
    replicas.push(await startGateway(yaml, { env: { MASTER, CLIENT_KEY: KEY } }));
  }
  // Every replica has its connections up before the test starts.
  for (const r of replicas) await waitFor(async () => metricValue(await r.metrics(MASTER), 'switchyard_state_redis_up') === 1, 'redis up');
  return replicas;
}

async function stopFleet(replicas) {
  for (const r of replicas) await r.stop();
}

// Polls `check` until it holds; resolves to how long that took (ms).
async function waitFor(check, what, timeoutMs = 5000) {
  const started = Date.now();
  await eventually(check, { what, timeoutMs, intervalMs: 5 });
  return Date.now() - started;
}

const chat = (replica, model = 'chat', headers = {}) =>
  request(replica.port, { headers, body: { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] } });

const status = async (replica) => {
  const res = await request(replica.port, { method: 'GET', path: '/status', headers: auth });
  assert.equal(res.status, 200, res.body);
  return Object.fromEntries(JSON.parse(res.body).deployments.map((d) => [d.name, d]));
};

const hits = async (model) => (await mock.stats()).requests.filter((r) => r.model === model).length;

test('a key limited to N requests per minute gets exactly N across the fleet', async () => {
  await mock.scenario([]);
  const fleet = await startFleet(2, {
    keys: 'keys: [{name: shared, key: os.environ/CLIENT_KEY, rpm: 10}]',
  });
  try {
    const statuses = [];
    for (let i = 0; i < 30; ++i) {
      const res = await chat(fleet[i % 2], 'chat', { authorization: `Bearer ${KEY}` });
      statuses.push(res.status);
      if (res.status === 429) {
        assert.equal(JSON.parse(res.body).error.code, 'rate_limit_exceeded');
        assert.ok(Number(res.headers['retry-after-ms']) > 0);
      }
    }
    const accepted = statuses.filter((s) => s === 200).length;
    console.log(`# rpm 10 across 2 replicas, 30 requests alternating: ${accepted} accepted`);
    assert.equal(accepted, 10);
    assert.equal(statuses.filter((s) => s === 429).length, 20);
    for (const r of fleet) {
      const fallbacks = metricValue(await r.metrics(MASTER),
                                    'switchyard_state_fallbacks_total{operation="key_admit"}');
      assert.equal(fallbacks ?? 0, 0, 'every admission was the shared one');
    }
  } finally {
    await stopFleet(fleet);
  }
});

test('a deployment benched by one replica is skipped by the others with no upstream call', async () => {
  await mock.scenario([{ match: { model: 'solo-a' }, fault: 'status=500' }]);
  const fleet = await startFleet(3, { health: 'health: {allowed_fails: 1, cooldown_ms: 30000}' });
  try {
    // Replica A sees the failures and cools the deployment.
    while ((await status(fleet[0]))['solo-a'].state !== 'cooling') await chat(fleet[0], 'solo');
    const before = await hits('solo-a');
    const took = await Promise.all(fleet.slice(1).map((r) => waitFor(
      async () => (await status(r))['solo-a'].state === 'cooling', 'cooling elsewhere', 100)));
    console.log(`# cooling seen by the other replicas after ${took.join(' and ')} ms`);
    for (const r of fleet.slice(1)) {
      const res = await chat(r, 'solo');
      assert.equal(res.status, 503, res.body);
      assert.match(JSON.parse(res.body).error.message, /unavailable/);
    }
    assert.equal(await hits('solo-a'), before, 'no upstream call from the other replicas');
  } finally {
    await stopFleet(fleet);
    await mock.scenario([]);
  }
});

test('scripts flushed from a live Redis: a fire-and-forget script recovers on that very call', async () => {
  await mock.scenario([{ match: { model: 'solo-a' }, fault: 'status=500' }]);
  const [replica] = await startFleet(1, { health: 'health: {allowed_fails: 1, cooldown_ms: 30000}' });
  try {
    // The server forgets every script the replica loaded when it connected (and every key).
    assert.equal(await redis.command('FLUSHALL'), '+OK\r\n');
    assert.equal(await redis.command('SCRIPT', 'FLUSH'), '+OK\r\n');
    // The cooling mark is stored by a script whose reply nobody waits for: NOSCRIPT, then the
    // same call again with the script's source.
    while ((await status(replica))['solo-a'].state !== 'cooling') await chat(replica, 'solo');
    await waitFor(async () => /cooling/.test(await redis.command('KEYS', '*solo-a*cooling*')),
                  'the cooling mark in Redis');
  } finally {
    await stopFleet([replica]);
    await mock.scenario([]);
  }
});

test('a Redis that stops answering without closing is noticed within seconds, and rejoined', async () => {
  const [replica] = await startFleet(1);
  const up = async () => metricValue(await replica.metrics(MASTER), 'switchyard_state_redis_up');
  try {
    // Frozen: its sockets stay open and nothing comes back, on the quiet subscriber too.
    redis.child().kill('SIGSTOP');
    const took = await waitFor(async () => (await up()) === 0, 'the silence noticed', 10000);
    console.log(`# a silent Redis noticed after ${took} ms`);
    assert.ok(took < 6000, `${took} ms`);
    // Requests are answered meanwhile, from local state.
    assert.equal((await chat(replica)).status, 200);
  } finally {
    redis.child().kill('SIGCONT');
  }
  try {
    await waitFor(async () => (await up()) === 1, 'every connection up again', 10000);
  } finally {
    await stopFleet([replica]);
  }
});

test('a spend-cap disable on one replica disables the deployment on the others; a re-enable on another re-enables it everywhere', async () => {
  await mock.scenario([{ match: { model: 'chat-a' }, fault: 'error=insufficient_quota' }]);
  const [a, b] = await startFleet(2);
  try {
    const first = await chat(a);
    assert.equal(first.status, 200);
    assert.equal(first.headers['x-switchyard-deployment'], 'chat-b', 'served by the fallback');
    await waitFor(async () => (await status(b))['chat-a'].state === 'disabled', 'disabled on B', 100);
    const sb = (await status(b))['chat-a'];
    assert.equal(sb.disabled_reason, 'spend cap reached');
    const before = await hits('chat-a');
    const onB = await chat(b);
    assert.equal(onB.headers['x-switchyard-deployment'], 'chat-b');
    assert.equal(await hits('chat-a'), before, 'B did not rediscover the cap upstream');

    await mock.scenario([]);
    const enabled = await request(b.port, { path: '/admin/deployments/chat-a/enable', headers: auth });
    assert.equal(enabled.status, 200, enabled.body);
    await waitFor(async () => (await status(a))['chat-a'].state === 'healthy', 'enabled on A', 100);
    assert.equal((await chat(a)).headers['x-switchyard-deployment'], 'chat-a');
  } finally {
    await stopFleet([a, b]);
  }
});

test('a half-open deployment gets one probe at a time across the fleet', async () => {
  await mock.scenario([{ match: { model: 'solo-a' }, fault: 'status=500' }]);
  const fleet = await startFleet(2, {
    health: 'health: {allowed_fails: 1000, breaker: {consecutive_failures: 2, open_ms: 300, success_threshold: 1, half_open_probes: 1}}',
  });
  try {
    while ((await status(fleet[0]))['solo-a'].breaker !== 'open') await chat(fleet[0], 'solo');
    await waitFor(async () => (await status(fleet[1]))['solo-a'].breaker === 'open', 'open on B', 100);
    // Slow, failing probes: while one is out, the other replica must not send its own.
    await mock.scenario([{ match: { model: 'solo-a' }, fault: 'status=500; delay_headers_ms=400' }]);
    // Once open_ms (300) has passed, both breakers are half-open.
    for (const r of fleet) {
      await waitFor(async () => (await status(r))['solo-a'].breaker === 'half_open', 'half-open');
    }
    const before = await hits('solo-a');
    await Promise.all([chat(fleet[0], 'solo'), chat(fleet[1], 'solo'), chat(fleet[0], 'solo'),
                       chat(fleet[1], 'solo')]);
    const probes = (await hits('solo-a')) - before;
    console.log(`# concurrent requests on a half-open deployment, 2 replicas: ${probes} probe(s)`);
    assert.equal(probes, 1);
  } finally {
    await stopFleet(fleet);
    await mock.scenario([]);
  }
});

test('a probe slot whose holder died frees itself: refused takes do not keep it alive', async () => {
  await mock.scenario([{ match: { model: 'solo-a' }, fault: 'status=500' }]);
  const fleet = await startFleet(2, {
    health: 'health: {allowed_fails: 1000, breaker: {consecutive_failures: 2, open_ms: 300, success_threshold: 1, half_open_probes: 1}}',
  });
  try {
    while ((await status(fleet[0]))['solo-a'].breaker !== 'open') await chat(fleet[0], 'solo');
    await mock.scenario([]);
    // A replica took the fleet's only probe slot and died: the count stays 1 until it expires.
    const prefix = readFileSync(fleet[0].file, 'utf8').match(/key_prefix: "([^"]+)"/)[1];
    await redis.command('SET', `${prefix}{d:solo-a}:probes`, '1', 'PX', '300');
    // Requests keep coming while the slot is held; each take is refused. Once it expired, a probe
    // goes out and, answered, closes the breaker.
    const before = await hits('solo-a');
    const closedAfter = await waitFor(async () => {
      await chat(fleet[1], 'solo');
      return (await status(fleet[1]))['solo-a'].breaker === 'closed';
    }, 'breaker closed by a probe', 3000);
    console.log(`# lost probe slot: breaker closed after ${closedAfter} ms`);
    assert.ok((await hits('solo-a')) > before, 'a probe reached the deployment');
  } finally {
    await stopFleet(fleet);
    await mock.scenario([]);
  }
});

test('a key added through one replica admits on the others, and its removal too', async () => {
  await mock.scenario([]);
  const [a, b] = await startFleet(2, {
    keys: 'keys: [{name: existing, key: os.environ/CLIENT_KEY}]',
  });
  try {
    const added = await request(a.port, { path: '/admin/keys', headers: auth,
                                          body: { name: 'fresh', rpm: 100 } });
    assert.equal(added.status, 201, added.body);
    const fresh = JSON.parse(added.body).key;
    await waitFor(async () => (await chat(b, 'chat', { authorization: `Bearer ${fresh}` })).status === 200,
                  'the new key admitted on B', 500);
    const removed = await request(b.port, { method: 'DELETE', path: '/admin/keys/fresh', headers: auth });
    assert.equal(removed.status, 200, removed.body);
    await waitFor(async () => (await chat(a, 'chat', { authorization: `Bearer ${fresh}` })).status === 401,
                  'the key refused on A', 500);
    // A replica that starts later loads the keys added at runtime.
    const added2 = await request(a.port, { path: '/admin/keys', headers: auth, body: { name: 'late', rpm: 100 } });
    const late = JSON.parse(added2.body).key;
    const [c] = await startFleetLike(a);
    try {
      await waitFor(async () => (await chat(c, 'chat', { authorization: `Bearer ${late}` })).status === 200,
                    'a key added before C started', 1000);
    } finally {
      await c.stop();
    }
  } finally {
    await stopFleet([a, b]);
  }
});

test('a removal missed while cut off from Redis is applied when the replica reconnects', async () => {
  await mock.scenario([]);
  const [a, b] = await startFleet(2, { keys: 'keys: [{name: existing, key: os.environ/CLIENT_KEY}]' });
  try {
    const added = await request(a.port, { path: '/admin/keys', headers: auth,
                                          body: { name: 'leaked', rpm: 100 } });
    assert.equal(added.status, 201, added.body);
    const leaked = JSON.parse(added.body).key;
    await waitFor(async () => (await chat(b, 'chat', { authorization: `Bearer ${leaked}` })).status === 200,
                  'the key admitted on B', 1000);
    // Every subscriber loses its connection; the removal is published before they are back, so
    // the replicas that were cut off (B) miss it.
    await redis.command('CLIENT', 'KILL', 'TYPE', 'pubsub');
    const removed = await request(a.port, { method: 'DELETE', path: '/admin/keys/leaked', headers: auth });
    assert.equal(removed.status, 200, removed.body);
    const after = await waitFor(async () => (await chat(b, 'chat', { authorization: `Bearer ${leaked}` })).status === 401,
                                'the key refused on B after it reconnected', 5000);
    console.log(`# a missed removal applied on B after ${after} ms`);
    // Added again: the removal no longer applies.
    const again = await request(a.port, { path: '/admin/keys', headers: auth,
                                          body: { name: 'leaked', rpm: 100 } });
    assert.equal(again.status, 201, again.body);
    const fresh = JSON.parse(again.body).key;
    await waitFor(async () => (await chat(b, 'chat', { authorization: `Bearer ${fresh}` })).status === 200,
                  'the new key admitted on B', 1000);
  } finally {
    await stopFleet([a, b]);
  }
});

// One more replica with the config `replica` serves.
async function startFleetLike(replica) {
  const { readFileSync } = await import('node:fs');
  const yaml = readFileSync(replica.file, 'utf8');
  const c = await startGateway(yaml, { env: { MASTER, CLIENT_KEY: KEY } });
  await waitFor(async () => metricValue(await c.metrics(MASTER), 'switchyard_state_redis_up') === 1, 'redis up');
  return [c];
}

test('two replicas together stay within a provider limit: no upstream 429 in the burst', async () => {
  await mock.scenario([]);
  const r = await fetch(`${mock.base}/mock/limits`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rpm: 600 }),
  });
  assert.equal(r.status, 200);
  await mock.reset();
  const fleet = await startFleet(2, { models: ', limits: {rpm: 600}' });
  try {
    const runs = [];
    for (let i = 0; i < 40; ++i) {
      runs.push(request(fleet[i % 2].port, {
        headers: { 'x-switchyard-deadline-ms': '8000' },
        body: { model: 'solo', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
      }));
    }
    const answers = await Promise.all(runs);
    const stats = await mock.stats();
    console.log(`# burst of 40 across 2 replicas, 600 RPM upstream: ${stats.rate_limited.total} upstream 429s, ${answers.filter((a) => a.status === 200).length} answered 200`);
    if (stats.rate_limited.total > 0) {
      // When the provider saw each request (ms after the first), to tell where the limit broke.
      const start = stats.requests[0].t_ms;
      console.log(`# arrivals: ${stats.requests.map((q) => `${(q.t_ms - start).toFixed(0)}${q.status === 429 ? '!' : ''}`).join(' ')}`);
    }
    assert.equal(stats.rate_limited.total, 0);
    assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
  } finally {
    await stopFleet(fleet);
    await fetch(`${mock.base}/mock/limits`, { method: 'DELETE' });
    await mock.reset();
  }
});

test('Redis killed during load: every request is answered; Redis back: the fleet shares again', async () => {
  await mock.scenario([]);
  const fleet = await startFleet(2, {
    keys: 'keys: [{name: shared, key: os.environ/CLIENT_KEY, rpm: 100000}]',
    timeout: 20,
  });
  try {
    let stop = false;
    const results = [];
    const load = async (replica) => {
      while (!stop) {
        try {
          const res = await chat(replica, 'chat', { authorization: `Bearer ${KEY}` });
          results.push(res.status);
        } catch (e) {
          results.push(String(e));
        }
      }
    };
    const clients = [];
    for (let i = 0; i < 8; ++i) clients.push(load(fleet[i % 2]));
    // The durations are the scenario: load before, during and after an 800 ms Redis outage.
    await sleep(300);
    await redis.kill();
    await sleep(800);
    const duringOutage = results.length;
    await redis.restart();
    await sleep(800);
    stop = true;
    await Promise.all(clients);
    const failed = results.filter((s) => s !== 200);
    console.log(`# ${results.length} requests across a Redis outage (${duringOutage} before it ended), ${failed.length} not 200`);
    assert.deepEqual(failed, []);
    for (const r of fleet) {
      await waitFor(async () => metricValue(await r.metrics(MASTER), 'switchyard_state_redis_up') === 1, 'redis back');
      const text = await r.metrics(MASTER);
      assert.ok(metricValue(text, 'switchyard_state_fallbacks_total{operation="key_admit"}') > 0,
                'admissions during the outage were decided locally');
      assert.match(r.stderr(), /"event":"state_redis_unavailable"/);
      assert.match(r.stderr(), /"event":"state_redis_back"/);
      assert.equal(r.stderr().match(/state_redis_unavailable/g).length, 1, 'logged once per episode');
    }
    // Shared again: a deployment benched on one replica is skipped by the other.
    await mock.scenario([{ match: { model: 'solo-a' }, fault: 'status=500' }]);
    while ((await status(fleet[0]))['solo-a'].state === 'healthy') await chat(fleet[0], 'solo', { authorization: `Bearer ${KEY}` });
    await waitFor(async () => (await status(fleet[1]))['solo-a'].state !== 'healthy', 'benched on B after the outage', 500);
  } finally {
    await stopFleet(fleet);
    await mock.scenario([]);
  }
});

test('a password-protected Redis: the right password shares, a wrong one serves locally and never shows it', async () => {
  const locked = await startRedis(['--requirepass', 'redis-secret-0123']);
  const yaml = (password) => `
server: {master_key: os.environ/MASTER}
state: {backend: redis, url: "${locked.url}", password: "${password}"}
models:
  - name: solo
    deployments: [{name: solo-a, model: solo-a, api_base: "${mock.base}/v1"}]
`;
  const good = await startGateway(yaml('redis-secret-0123'), { env: { MASTER } });
  const bad = await startGateway(yaml('wrong-secret-4567'), { env: { MASTER } });
  try {
    await mock.scenario([]);
    await waitFor(async () => metricValue(await good.metrics(MASTER), 'switchyard_state_redis_up') === 1, 'logged in');
    assert.equal((await chat(bad, 'solo')).status, 200, 'served without Redis');
    assert.equal(metricValue(await bad.metrics(MASTER), 'switchyard_state_redis_up'), 0);
    await waitFor(async () => /state_redis_unavailable/.test(bad.stderr()), 'logged');
    assert.match(bad.stderr(), /login refused/);
    assert.doesNotMatch(bad.stderr() + good.stderr(), /secret/);
  } finally {
    await good.stop();
    await bad.stop();
    await locked.stop();
  }
});

test('Redis over TLS: replicas that trust its certificate share, one that does not serves locally', async () => {
  const dir = tempDir();
  makeCertificates(dir);
  const secure = await startRedis([], {
    tls: { cert: path.join(dir, 'server.pem'), key: path.join(dir, 'server.key') },
  });
  const prefix = `tls${Date.now()}:`;  // one for the whole fleet
  const yaml = (caFile) => `
server: {master_key: os.environ/MASTER}
state: {backend: redis, url: "${secure.url}", key_prefix: "${prefix}", timeout_ms: 200${caFile ? `, ca_file: "${caFile}"` : ''}}
keys: [{name: shared, key: os.environ/CLIENT_KEY, rpm: 4}]
models:
  - name: solo
    deployments: [{name: solo-a, model: solo-a, api_base: "${mock.base}/v1"}]
`;
  const trusting = [];
  let untrusting;
  try {
    await mock.scenario([]);
    for (let i = 0; i < 2; ++i) {
      trusting.push(await startGateway(yaml(path.join(dir, 'ca.pem')), { env: { MASTER, CLIENT_KEY: KEY } }));
    }
    untrusting = await startGateway(yaml(''), { env: { MASTER, CLIENT_KEY: KEY } });
    for (const r of trusting) {
      await waitFor(async () => metricValue(await r.metrics(MASTER), 'switchyard_state_redis_up') === 1, 'TLS up');
    }
    const statuses = [];
    for (let i = 0; i < 8; ++i) {
      statuses.push((await chat(trusting[i % 2], 'solo', { authorization: `Bearer ${KEY}` })).status);
    }
    assert.equal(statuses.filter((s) => s === 200).length, 4, `rpm 4 across the fleet: ${statuses}`);
    // The certificate is not trusted without the CA: no connection, the replica decides alone.
    assert.equal((await chat(untrusting, 'solo', { authorization: `Bearer ${KEY}` })).status, 200);
    assert.equal(metricValue(await untrusting.metrics(MASTER), 'switchyard_state_redis_up'), 0);
    await waitFor(async () => /state_redis_unavailable/.test(untrusting.stderr()), 'logged');
    assert.match(untrusting.stderr(), /certificate verify failed|TLS handshake/);
  } finally {
    for (const r of trusting) await r.stop();
    await untrusting?.stop();
    await secure.stop();
  }
});
