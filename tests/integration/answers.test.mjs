// Kept answers (docs/answers.md): an idempotency key runs its request at most once — concurrent
// duplicates wait for the first and get its answer, later ones get it replayed, another body is a
// 422 — and a model group's response cache answers exact repeats (serve: always) or a request
// whose whole chain failed (serve: on_error). Measured on the mock's request log.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startMock, startGateway, startRedis, request, sleep, metricValue, eventually,
} from './harness.mjs';

let mock;
let gateway;

before(async () => {
  mock = await startMock();
  const d = (name, model, region) =>
    `{name: ${name}, model: ${model}, api_base: "http://127.0.0.1:${mock.port}/v1"${
      region ? `, region: ${region}` : ''}}`;
  gateway = await startGateway(`
retry: {base_ms: 10, cap_ms: 20}
# Every test starts from healthy deployments: failures never bench them here.
health: {allowed_fails: 1000, breaker: {consecutive_failures: 1000, minimum_calls: 100000}}
idempotency: {ttl_s: 600, max_answer_bytes: 4096}
models:
  - name: chat
    deployments: [${d('chat-a', 'idem-model')}]
  - name: kept
    cache: {serve: on_error, ttl_s: 600, max_entries: 100}
    deployments: [${d('kept-a', 'kept-model', 'us')}]
  - name: always
    cache: {serve: always, ttl_s: 600, max_entries: 2}
    deployments: [${d('always-a', 'always-model')}]
  - name: structured
    fallbacks: [structured-backup]
    deployments: [${d('s-openai', 's-primary')}]
  - name: structured-backup
    deployments:
      - {name: s-anthropic, provider: anthropic, model: s-claude, api_key: sk-ant,
         api_base: "http://127.0.0.1:${mock.port}/v1"}
  - name: annotated
    validation: {on_invalid: annotate}
    deployments: [${d('a-openai', 'a-model')}]
  - name: group-schema
    validation:
      schema: {type: object, required: [answer], properties: {answer: {type: string}}}
    deployments: [${d('g-openai', 'g-model')}]
`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const body = (model, content = 'Hello', extra = {}) =>
  ({ model, messages: [{ role: 'user', content }], ...extra });

const chat = (model, { key, content, extra, headers = {}, auth = 'sk-client-a' } = {}) =>
  request(gateway.port, {
    body: body(model, content, extra),
    headers: {
      authorization: `Bearer ${auth}`,
      ...(key ? { 'idempotency-key': key } : {}),
      ...headers,
    },
  });

// The mock answers every request for `model` with `fault` (none: a plain answer), from now on.
async function upstream(model, fault) {
  await mock.scenario(fault ? [{ match: { model }, fault }] : []);
  await mock.reset();
}

async function calls(model) {
  return (await mock.stats()).requests.filter((r) => r.model === model).length;
}

let serial = 0;
const freshKey = () => `key-${process.pid}-${++serial}`;

test('concurrent duplicates of one idempotency key cost one upstream call and get one answer',
     async () => {
  await upstream('idem-model', 'delay_headers_ms=400');
  const key = freshKey();
  const answers = await Promise.all(Array.from({ length: 6 }, () =>
    chat('chat', { key, content: 'concurrent' })));
  assert.equal(await calls('idem-model'), 1);
  for (const a of answers) {
    assert.equal(a.status, 200, a.body);
    assert.equal(a.body, answers[0].body);
  }
  const replays = answers.filter((a) => a.headers['x-switchyard-idempotent-replay'] === 'true');
  assert.equal(replays.length, 5, 'all but the first are replays');
  assert.equal(replays[0].headers['x-switchyard-deployment'], 'chat-a');
});

test('a duplicate after the answer gets it replayed; another body with the key is a 422',
     async () => {
  await upstream('idem-model');
  const key = freshKey();
  const first = await chat('chat', { key, content: 'once' });
  assert.equal(first.status, 200, first.body);
  assert.equal(first.headers['x-switchyard-idempotent-replay'], undefined);
  const again = await chat('chat', { key, content: 'once' });
  assert.equal(again.status, 200);
  assert.equal(again.headers['x-switchyard-idempotent-replay'], 'true');
  assert.equal(again.body, first.body);
  const other = await chat('chat', { key, content: 'something else' });
  assert.equal(other.status, 422, other.body);
  assert.equal(JSON.parse(other.body).error.code, 'idempotency_key_reused');
  assert.equal(await calls('idem-model'), 1);
  // The key is the client's own: another client's identical key is another request.
  const stranger = await chat('chat', { key, content: 'once', auth: 'sk-client-b' });
  assert.equal(stranger.status, 200);
  assert.equal(stranger.headers['x-switchyard-idempotent-replay'], undefined);
  assert.equal(await calls('idem-model'), 2);
});

test('a stream is replayed as the same SSE, to concurrent and later duplicates', async () => {
  await upstream('idem-model', 'delay_chunks_ms=30');
  const key = freshKey();
  const streamed = () => chat('chat', { key, content: 'stream me', extra: { stream: true } });
  const [a, b] = await Promise.all([streamed(), streamed()]);
  const c = await streamed();
  assert.equal(await calls('idem-model'), 1);
  for (const r of [a, b, c]) {
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/event-stream/);
    assert.equal(r.body, a.body);
  }
  assert.match(a.body, /data: \[DONE\]\n\n$/);
  assert.equal(c.headers['x-switchyard-idempotent-replay'], 'true');
});

test('a client that leaves does not lose the answer: its retry gets it without a second call',
     async () => {
  await upstream('idem-model', 'delay_headers_ms=500');
  const key = freshKey();
  // The first try gives up while its attempt is upstream (as an SDK's timeout would); the
  // request runs on.
  const controller = new AbortController();
  const gone = fetch(`${gateway.base}/v1/chat/completions`, {
    method: 'POST',
    signal: controller.signal,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client-a',
               'idempotency-key': key },
    body: JSON.stringify(body('chat', 'left early')),
  }).catch((e) => e);
  await eventually(async () => (await calls('idem-model')) === 1,
                   { what: 'the first try\'s attempt to reach the upstream' });
  controller.abort();
  assert.equal((await gone).name, 'AbortError');
  const retry = await chat('chat', { key, content: 'left early' });
  assert.equal(retry.status, 200, retry.body);
  assert.equal(retry.headers['x-switchyard-idempotent-replay'], 'true');
  assert.equal(await calls('idem-model'), 1);
});

test('a failed answer is not kept: the key runs again once the failure is over', async () => {
  await upstream('idem-model', 'status=500');
  const key = freshKey();
  const failed = await chat('chat', { key, content: 'flaky' });
  assert.equal(failed.status, 500, failed.body);
  const upstreamCalls = await calls('idem-model');
  assert.ok(upstreamCalls >= 1);
  await mock.scenario([]);
  await sleep(2100);  // failures are kept 2 s, for the duplicates waiting for them
  const later = await chat('chat', { key, content: 'flaky' });
  assert.equal(later.status, 200, later.body);
  assert.equal(later.headers['x-switchyard-idempotent-replay'], undefined);
  assert.equal(await calls('idem-model'), upstreamCalls + 1);
});

test('an answer larger than idempotency.max_answer_bytes is not kept: a replay is a 409',
     async () => {
  await upstream('idem-model', 'chunks=2000');
  const key = freshKey();
  const first = await chat('chat', { key, content: 'a long one' });
  assert.equal(first.status, 200);
  assert.ok(first.body.length > 4096);
  const again = await chat('chat', { key, content: 'a long one' });
  assert.equal(again.status, 409, again.body);
  assert.equal(JSON.parse(again.body).error.code, 'idempotent_answer_unavailable');
  assert.equal(await calls('idem-model'), 1);
});

test('malformed idempotency keys are refused with a 400', async () => {
  for (const headers of [{ 'idempotency-key': 'x'.repeat(256) },
                         { 'idempotency-key': 'has space' }]) {
    const res = await chat('chat', { headers });
    assert.equal(res.status, 400, res.body);
    assert.equal(JSON.parse(res.body).error.param, 'idempotency-key');
  }
});

test('serve: on_error — a full outage is answered from the cache, marked stale', async () => {
  await upstream('kept-model');
  const fresh = await chat('kept', { content: 'cache me' });
  assert.equal(fresh.status, 200);
  assert.equal(fresh.headers['x-switchyard-cache'], undefined);
  const streamed = await chat('kept', { content: 'cache me', extra: { stream: true } });
  assert.equal(streamed.status, 200);
  await mock.scenario([{ match: { model: 'kept-model' }, fault: 'status=503' }]);
  try {
    const stale = await chat('kept', { content: 'cache me' });
    assert.equal(stale.status, 200, stale.body);
    assert.equal(stale.headers['x-switchyard-cache'], 'stale');
    assert.equal(stale.body, fresh.body);
    const staleStream = await chat('kept', { content: 'cache me', extra: { stream: true } });
    assert.equal(staleStream.status, 200);
    assert.match(staleStream.headers['content-type'], /^text\/event-stream/);
    assert.equal(staleStream.headers['x-switchyard-cache'], 'stale');
    assert.equal(staleStream.body, streamed.body);
    // Nothing cached for this one: the client gets the error.
    const uncached = await chat('kept', { content: 'never asked before' });
    assert.equal(uncached.status, 503, uncached.body);
    // Another client's answers are not its own.
    const stranger = await chat('kept', { content: 'cache me', auth: 'sk-client-b' });
    assert.equal(stranger.status, 503);
    // An answer served without a residency constraint is not one for an EU-only request.
    const eu = await chat('kept', { content: 'cache me',
                                    headers: { 'x-switchyard-residency': 'us' } });
    assert.equal(eu.status, 503);
  } finally {
    await mock.scenario([]);
  }
  const metrics = await gateway.metrics();
  assert.ok(metricValue(metrics,
    'switchyard_cache_total{model_group="kept",result="stale"}') >= 2);
  assert.ok(metricValue(metrics,
    'switchyard_cache_total{model_group="kept",result="miss"}') >= 3);
});

test('serve: always — exact repeats are hits without an upstream call; the LRU is bounded',
     async () => {
  await upstream('always-model');
  const first = await chat('always', { content: 'repeat' });
  assert.equal(first.status, 200);
  assert.equal(first.headers['x-switchyard-cache'], undefined);
  // Key order, whitespace and `user` do not change what is asked.
  const same = await request(gateway.port, {
    body: `{"messages":[{"content":"repeat","role":"user"}],  "user":"u-1","model":"always"}`,
    headers: { authorization: 'Bearer sk-client-a' },
  });
  assert.equal(same.status, 200);
  assert.equal(same.headers['x-switchyard-cache'], 'hit');
  assert.equal(same.body, first.body);
  assert.equal(await calls('always-model'), 1);
  // A different parameter is a different request.
  const warmer = await chat('always', { content: 'repeat', extra: { temperature: 0.5 } });
  assert.equal(warmer.headers['x-switchyard-cache'], undefined);
  assert.equal(await calls('always-model'), 2);
  // max_entries: 2, least recently used out: `first`'s answer is used again after `warmer`'s was
  // stored, so a third answer pushes out `warmer`'s.
  assert.equal((await chat('always', { content: 'repeat' })).headers['x-switchyard-cache'], 'hit');
  await chat('always', { content: 'third' });
  assert.equal(await calls('always-model'), 3);
  assert.equal((await chat('always', { content: 'repeat' })).headers['x-switchyard-cache'], 'hit');
  const evicted = await chat('always', { content: 'repeat', extra: { temperature: 0.5 } });
  assert.equal(evicted.headers['x-switchyard-cache'], undefined);
  assert.equal(await calls('always-model'), 4);
  const metrics = await gateway.metrics();
  assert.equal(metricValue(metrics, 'switchyard_cache_total{model_group="always",result="hit"}'),
               3);
});

test('with shared state, duplicates sent to two replicas cost one upstream call', async () => {
  const redis = await startRedis();
  const replicas = [];
  try {
    const yaml = `
state: {backend: redis, url: "${redis.url}", key_prefix: "answers${process.pid}:"}
models:
  - name: chat
    deployments: [{name: fleet-a, model: fleet-model, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`;
    for (let i = 0; i < 2; ++i) replicas.push(await startGateway(yaml));
    for (const r of replicas) {
      await eventually(
        async () => metricValue(await r.metrics(), 'switchyard_state_redis_up') === 1,
        { what: 'redis up', intervalMs: 50 });
    }
    await upstream('fleet-model', 'delay_headers_ms=400');
    const key = freshKey();
    const send = (replica) => request(replica.port, {
      body: body('chat', 'fleet'),
      headers: { authorization: 'Bearer sk-fleet', 'idempotency-key': key },
    });
    const answers = await Promise.all([0, 1, 0, 1].map((i) => send(replicas[i])));
    const later = await send(replicas[1]);
    assert.equal(await calls('fleet-model'), 1);
    for (const a of [...answers, later]) {
      assert.equal(a.status, 200, a.body);
      assert.equal(a.body, answers[0].body);
    }
    assert.equal(later.headers['x-switchyard-idempotent-replay'], 'true');
    const other = await request(replicas[0].port, {
      body: body('chat', 'another body'),
      headers: { authorization: 'Bearer sk-fleet', 'idempotency-key': key },
    });
    assert.equal(other.status, 422);
    // Kept in Redis, with the config's TTL.
    const stored = await redis.command('KEYS', `answers${process.pid}:{i:*`);
    assert.match(stored, /^\*1\r\n/, stored);
    for (const r of replicas) {
      assert.equal(metricValue(await r.metrics(),
                               'switchyard_state_fallbacks_total{operation="idempotency"}'),
                   undefined);
    }
  } finally {
    await mock.scenario([]);
    for (const r of replicas) await r.stop();
    await redis.stop();
  }
});

const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, temperature: { type: 'number' },
                conditions: { enum: ['sunny', 'rain'] } },
  required: ['city', 'temperature', 'conditions'],
  additionalProperties: false,
};
const structured = (model, extra = {}, headers = {}) => chat(model, {
  content: 'Weather in Paris?',
  extra: { response_format: { type: 'json_schema',
                              json_schema: { name: 'weather', strict: true, schema: SCHEMA } },
           ...extra },
  headers,
});

function upstreamBodies(model) {
  return mock.stats().then((s) => s.requests.filter((r) => r.model === model));
}

test('an answer that breaks the schema fails over; the fallback is asked for the same schema',
     async () => {
  await upstream('s-primary', 'invalid_output=1');
  const res = await structured('structured');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-deployment'], 's-anthropic');
  assert.equal(res.headers['x-switchyard-validation'], 'passed');
  const answer = JSON.parse(JSON.parse(res.body).choices[0].message.content);
  assert.deepEqual(answer, { city: 'text', temperature: 1.5, conditions: 'sunny' });
  assert.equal((await upstreamBodies('s-primary')).length, 1, 'never retried on the same one');
  assert.equal((await upstreamBodies('s-claude')).length, 1);
  const metrics = await gateway.metrics();
  assert.equal(metricValue(metrics,
    'switchyard_output_validations_total{deployment="s-openai",result="failed"}'), 1);
  assert.equal(metricValue(metrics,
    'switchyard_output_validations_total{deployment="s-anthropic",result="passed"}'), 1);
});

test('a schema-conforming answer from the first deployment passes and is not re-asked', async () => {
  await upstream('s-primary');
  const res = await structured('structured');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-deployment'], 's-openai');
  assert.equal(res.headers['x-switchyard-validation'], 'passed');
  assert.equal((await upstreamBodies('s-claude')).length, 0);
});

test('when every deployment answers wrong the client gets a 502 invalid_output listing them',
     async () => {
  await mock.scenario([{ match: { model: 's-primary' }, fault: 'invalid_output=1' },
                       { match: { model: 's-claude' }, fault: 'invalid_output=1' }]);
  await mock.reset();
  try {
    const res = await structured('structured');
    assert.equal(res.status, 502, res.body);
    const error = JSON.parse(res.body).error;
    assert.equal(error.code, 'invalid_output');
    assert.deepEqual(error.attempts.map((a) => [a.deployment, a.error_class]),
                     [['s-openai', 'invalid_output'], ['s-anthropic', 'invalid_output']]);
    assert.match(error.message, /does not match the requested JSON schema/);
  } finally {
    await mock.scenario([]);
  }
});

test('a background stream is validated at its end and falls back transparently', async () => {
  await upstream('s-primary', 'invalid_output=1');
  const res = await structured('structured', { stream: true },
                               { 'x-switchyard-stream-mode': 'background' });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-deployment'], 's-anthropic');
  assert.equal(res.headers['x-switchyard-validation'], 'passed');
  assert.doesNotMatch(res.body, /"error"/);
  const text = res.body.split('\n').filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '').join('');
  assert.deepEqual(JSON.parse(text), { city: 'text', temperature: 1.5, conditions: 'sunny' });
});

test('on_invalid: annotate returns the failing answer marked; a group schema applies', async () => {
  await upstream('a-model', 'invalid_output=1');
  const marked = await structured('annotated');
  assert.equal(marked.status, 200);
  assert.equal(marked.headers['x-switchyard-validation'], 'failed');
  assert.equal(JSON.parse(marked.body).choices[0].message.content, '{}');
  // The group's own schema: the mock answers plain text, which is no JSON object.
  await upstream('g-model');
  const plain = await chat('group-schema', { content: 'hi' });
  assert.equal(plain.status, 502, plain.body);
  assert.equal(JSON.parse(plain.body).error.code, 'invalid_output');
});

test('a schema that refers to itself without end is not checked, and nothing breaks', async () => {
  await upstream('s-primary');
  const res = await chat('structured', {
    content: 'loop',
    extra: { response_format: { type: 'json_schema',
                                 json_schema: { name: 'loop', schema: { $ref: '#' } } } },
  });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-validation'], 'skipped');
  assert.equal((await chat('chat', { content: 'still here' })).status, 200);
});

test('residency holds for kept answers: a shared cache and an idempotent replay never cross it',
     async () => {
  const own = await startGateway(`
models:
  - name: shared
    cache: {serve: always, ttl_s: 600, max_entries: 10, shared: true}
    deployments: [{name: us-a, model: shared-model, region: us,
                   api_base: "http://127.0.0.1:${mock.port}/v1"}]
`);
  try {
    await upstream('shared-model');
    const ask = (auth, headers = {}) => request(own.port, {
      body: body('shared', 'where'), headers: { authorization: `Bearer ${auth}`, ...headers },
    });
    // Served in the US and kept for everyone...
    assert.equal((await ask('sk-anyone')).status, 200);
    // (the answer is kept off the request's path: the first ask after it may still miss)
    await eventually(async () => (await ask('sk-someone-else')).headers['x-switchyard-cache'] === 'hit',
                     { what: 'the kept answer' });
    // ...but a request that must stay in the EU is refused as it would be alone, not given the
    // US answer from the cache.
    const eu = await ask('sk-eu-client', { 'x-switchyard-residency': 'eu' });
    assert.equal(eu.status, 403, eu.body);
    assert.equal(JSON.parse(eu.body).error.code, 'residency_not_satisfied');

    // An idempotency key: a retry under a stricter residency is not replayed an answer served
    // elsewhere.
    const key = freshKey();
    const first = await ask('sk-idem', { 'idempotency-key': key });
    assert.equal(first.status, 200);
    const stricter = await ask('sk-idem', { 'idempotency-key': key, 'x-switchyard-residency': 'eu' });
    assert.equal(stricter.status, 403, stricter.body);
    assert.equal(stricter.headers['x-switchyard-idempotent-replay'], undefined);
    const same = await ask('sk-idem', { 'idempotency-key': key });
    assert.equal(same.headers['x-switchyard-idempotent-replay'], 'true');
  } finally {
    await own.stop();
  }
});

test('one client\'s large answers never evict another client\'s idempotency key', async () => {
  // 10 MiB of kept answers; one client fills it with twelve 900 KB answers.
  const own = await startGateway(`
idempotency: {ttl_s: 600, max_answer_bytes: 1048576, max_bytes: 10485760}
models:
  - name: chat
    deployments: [{name: t-a, model: tenant-model, api_base: "http://127.0.0.1:${mock.port}/v1"}]
  - name: big
    deployments: [{name: t-big, model: big-model, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`);
  try {
    await mock.scenario([{ match: { model: 'big-model' }, fault: 'event_bytes=921600' }]);
    await mock.reset();
    const send = (model, auth, key) => request(own.port, {
      body: body(model, 'kept'), headers: { authorization: `Bearer ${auth}`, 'idempotency-key': key },
    });
    const kept = freshKey();
    assert.equal((await send('chat', 'sk-tenant-b', kept)).status, 200);
    for (let i = 0; i < 12; i++) {
      const res = await send('big', 'sk-tenant-a', freshKey());
      assert.equal(res.status, 200);
      assert.ok(res.body.length >= 900_000);
    }
    const retry = await send('chat', 'sk-tenant-b', kept);
    assert.equal(retry.headers['x-switchyard-idempotent-replay'], 'true');
    assert.equal(await calls('tenant-model'), 1, 'the retry ran upstream a second time');
  } finally {
    await mock.scenario([]);
    await own.stop();
  }
});

test('a kept answer read back from Redis is checked: one that would split the response is refused',
     async () => {
  const redis = await startRedis();
  const prefix = `tamper${process.pid}:`;
  const own = await startGateway(`
state: {backend: redis, url: "${redis.url}", key_prefix: "${prefix}"}
models:
  - name: chat
    deployments: [{name: r-a, model: redis-model, api_base: "http://127.0.0.1:${mock.port}/v1"}]
`);
  try {
    await eventually(async () => metricValue(await own.metrics(), 'switchyard_state_redis_up') === 1,
                     { what: 'redis up' });
    await upstream('redis-model');
    const key = freshKey();
    const send = () => request(own.port, {
      body: body('chat', 'tamper'), headers: { authorization: 'Bearer sk-r', 'idempotency-key': key },
    });
    assert.equal((await send()).status, 200);
    const listed = await redis.command('KEYS', `${prefix}{i:*`);
    const name = listed.split('\r\n')[2];
    assert.ok(name && name.startsWith(prefix), listed);
    const stored = await redis.command('GET', name);
    // "$<n>\r\nD<64 hex fingerprint><status> <stream> <header bytes>\n<headers><body>"
    const value = stored.slice(stored.indexOf('\r\n') + 2, -2);
    const fingerprint = value.slice(1, 65);
    const headers = 'x-a: b\r\n\r\nHTTP/1.1 200 OK\r\nx-injected: yes\r\n';
    const forged = `D${fingerprint}200 0 ${headers.length}\n${headers}{"forged":true}`;
    assert.match(await redis.command('SET', name, forged), /\+OK/);
    const replay = await send();
    assert.equal(replay.headers['x-injected'], undefined);
    assert.doesNotMatch(replay.body, /forged/);
    assert.equal(replay.status, 409, replay.body);
    assert.equal(JSON.parse(replay.body).error.code, 'idempotent_answer_unavailable');
  } finally {
    await own.stop();
    await redis.stop();
  }
});
