// Client keys against real processes: authentication in both wire formats, allowed model groups,
// RPM/TPM limits that hold exactly with an exact retry-after, monthly budgets from reported usage
// and prices, the per-key fallback switch, and the admin API that manages keys at run time.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, eventually } from './harness.mjs';

const MASTER = 'test-master-key-0123456789';
const KEYS = {
  OPEN_KEY: 'sk-open-0123456789abcdef',
  RPM_KEY: 'sk-rpm-0123456789abcdef',
  TPM_KEY: 'sk-tpm-0123456789abcdef',
  BUDGET_KEY: 'sk-budget-0123456789abcdef',
  ONLY_A_KEY: 'sk-only-a-0123456789abcdef',
  NOFB_KEY: 'sk-nofb-0123456789abcdef',
};
let mock;
let gateway;

before(async () => {
  mock = await startMock();
  const base = `http://127.0.0.1:${mock.port}/v1`;
  await mock.scenario([{ match: { model: 'broken' }, fault: 'status=500' }]);
  gateway = await startGateway(`
server: {master_key: os.environ/MASTER}
retry: {base_ms: 5, cap_ms: 20}
health: {allowed_fails: 1000, breaker: {consecutive_failures: 1000, minimum_calls: 1000}}
models:
  - name: a
    deployments: [{name: a-dep, model: model-a, api_base: "${base}", input_price: 100000, output_price: 100000}]
  - name: b
    deployments: [{name: b-dep, model: model-b, api_base: "${base}"}]
  - name: failing
    deployments: [{name: broken-dep, model: broken, api_base: "${base}"}]
    fallbacks: [b]
keys:
  - {name: open, key: os.environ/OPEN_KEY}
  - {name: rpm, key: os.environ/RPM_KEY, rpm: 5}
  - {name: tpm, key: os.environ/TPM_KEY, tpm: 1000}
  - {name: budget, key: os.environ/BUDGET_KEY, monthly_budget: 0.01}
  - {name: only-a, key: os.environ/ONLY_A_KEY, models: [a]}
  - {name: no-fallbacks, key: os.environ/NOFB_KEY, fallbacks: false}
`, { env: { MASTER, ...KEYS } });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const chat = (key, body = {}, headers = {}) => request(gateway.port, {
  headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
  body: { model: 'a', messages: [{ role: 'user', content: 'hi' }], ...body },
});
const admin = (method, path, body, key = MASTER) => request(gateway.port, {
  method, path, body, headers: key ? { authorization: `Bearer ${key}` } : {},
});

test('a request without a key, or with an unknown one, gets 401 in its wire format', async () => {
  const none = await chat(undefined);
  assert.equal(none.status, 401);
  assert.equal(JSON.parse(none.body).error.code, 'invalid_api_key');
  assert.match(JSON.parse(none.body).error.message, /Missing API key/);
  const wrong = await chat('sk-wrong-0123456789');
  assert.equal(wrong.status, 401);
  assert.equal(JSON.parse(wrong.body).error.message, 'Incorrect API key provided.');
  const anthropic = await request(gateway.port, {
    path: '/v1/messages',
    headers: { 'x-api-key': 'sk-wrong-0123456789', 'anthropic-version': '2023-06-01' },
    body: { model: 'a', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
  });
  assert.equal(anthropic.status, 401);
  const envelope = JSON.parse(anthropic.body);
  assert.equal(envelope.type, 'error');
  assert.equal(envelope.error.type, 'authentication_error');
  // Neither key is echoed anywhere.
  assert.ok(!wrong.body.includes('sk-wrong'));
});

test('a valid key, over x-api-key too, and the master key are served', async () => {
  assert.equal((await chat(KEYS.OPEN_KEY)).status, 200);
  const viaHeader = await chat(undefined, {}, { 'x-api-key': KEYS.OPEN_KEY });
  assert.equal(viaHeader.status, 200);
  assert.equal((await chat(MASTER)).status, 200);
  // The access log is written off the request path: wait for the line.
  await eventually(() => gateway.logs.some((l) => l.key === 'open'),
                   { what: 'the access-log line of the key', intervalMs: 20 });
  const line = gateway.logs.find((l) => l.key === 'open');
  assert.ok(line, 'the access log names the key');
  assert.equal(line.lane, 'interactive');
  assert.ok(!JSON.stringify(gateway.logs).includes(KEYS.OPEN_KEY), 'the key is never logged');
});

test('a key may only use its allowed model groups: 403', async () => {
  assert.equal((await chat(KEYS.ONLY_A_KEY)).status, 200);
  const denied = await chat(KEYS.ONLY_A_KEY, { model: 'b' });
  assert.equal(denied.status, 403);
  assert.equal(JSON.parse(denied.body).error.code, 'model_not_allowed');
  const viaFallbacks = await chat(KEYS.ONLY_A_KEY, { fallbacks: ['b'] });
  assert.equal(viaFallbacks.status, 403);
});

test('RPM holds exactly: of 9 concurrent requests 5 pass, the rest get a retry-after no sooner than it frees', async () => {
  await mock.reset();
  const answers = await Promise.all(Array.from({ length: 9 }, () => chat(KEYS.RPM_KEY)));
  const ok = answers.filter((a) => a.status === 200);
  const limited = answers.filter((a) => a.status === 429);
  assert.equal(ok.length, 5);
  assert.equal(limited.length, 4);
  for (const a of limited) {
    const error = JSON.parse(a.body).error;
    assert.equal(error.code, 'rate_limit_exceeded');
    assert.match(error.message, /5 requests per minute/);
    const ms = Number(a.headers['retry-after-ms']);
    // The window holds the five admissions until a minute (plus one 100 ms slot) has passed;
    // the hint is never sooner, and spread over up to 5 s after it so the four do not return
    // together.
    assert.ok(ms > 59_000 && ms <= 65_100, `retry-after-ms ${ms}`);
    assert.equal(Number(a.headers['retry-after']), Math.ceil(ms / 1000));
  }
  assert.ok(new Set(limited.map((a) => a.headers['retry-after-ms'])).size > 1,
            'the refused requests are not told to come back at one instant');
  // Refused requests never reached the provider.
  const upstream = (await mock.stats()).requests.filter((r) => r.model === 'model-a');
  assert.equal(upstream.length, 5);
  const metrics = await gateway.metrics(MASTER);
  assert.match(metrics, /switchyard_key_refusals_total\{key="rpm",reason="requests"\} 4/);
});

test('TPM counts the input estimate plus max_tokens', async () => {
  const tokens = async () =>
    JSON.parse((await admin('GET', '/admin/keys')).body).keys.find((k) => k.name === 'tpm')
      .usage.tokens_last_minute;
  // A slow answer holds its reservation (input estimate + max_tokens) until it ends.
  await mock.scenario([{ match: { model: 'broken' }, fault: 'status=500' },
                       { match: { model: 'model-a' }, fault: 'delay_headers_ms=1000', times: 1 }]);
  const first = chat(KEYS.TPM_KEY, { max_tokens: 600 });
  await eventually(async () => (await tokens()) >= 600, { what: 'the first request admitted' });
  // While it runs, 400 more do not fit: a 429 with an exact wait.
  const refused = await chat(KEYS.TPM_KEY, { max_tokens: 400 });
  assert.equal(refused.status, 429);
  assert.match(JSON.parse(refused.body).error.message, /1000 tokens per minute/);
  assert.ok(Number(refused.headers['retry-after-ms']) > 0);
  assert.equal((await first).status, 200);
  // It settles at its reported usage (a few tokens) as it ends, a moment after its answer...
  await eventually(async () => (await tokens()) < 600, { what: 'the first request settled' });
  // ...so 600 more fit.
  assert.equal((await chat(KEYS.TPM_KEY, { max_tokens: 600 })).status, 200);
  await mock.scenario([{ match: { model: 'broken' }, fault: 'status=500' }]);
});

test('a request larger than the key\'s whole TPM is refused at once, never admitted', async () => {
  // Counted as input estimate + max_tokens, 1,200 can never fit 1,000 per minute: no wait for an
  // empty window admits it, and no retry can succeed.
  const refused = await chat(KEYS.TPM_KEY, { max_tokens: 1200 });
  assert.equal(refused.status, 429);
  const error = JSON.parse(refused.body).error;
  assert.match(error.message, /Request too large for the key 'tpm'.*limit 1000/);
  assert.equal(refused.headers['retry-after'], undefined);
  assert.equal(refused.headers['x-should-retry'], 'false');
});

test('a monthly budget stops the key once the reported usage has spent it', async () => {
  // a-dep costs 100,000 per million tokens, input and output: 0.1 a token.
  const first = await chat(KEYS.BUDGET_KEY);
  assert.equal(first.status, 200);
  const usage = JSON.parse(first.body).usage;
  assert.ok(Number.isInteger(usage.prompt_tokens) && usage.prompt_tokens > 0, JSON.stringify(usage));
  assert.ok(Number.isInteger(usage.completion_tokens) && usage.completion_tokens > 0);
  const cost = (usage.prompt_tokens * 100_000 + usage.completion_tokens * 100_000) / 1e6;
  // The spend is added as the request ends, a moment after its answer went out.
  await eventually(async () => {
    const keys = JSON.parse((await admin('GET', '/admin/keys')).body).keys;
    return keys.find((k) => k.name === 'budget').usage.spent_this_month > 0;
  }, { what: 'the spend of the first request added to the key' });
  const stopped = await chat(KEYS.BUDGET_KEY);
  assert.equal(stopped.status, 429);
  const error = JSON.parse(stopped.body).error;
  assert.equal(error.type, 'insufficient_quota');
  assert.equal(error.code, 'budget_exceeded');
  // retry-after points at 00:00 UTC on the first of next month, spread by up to 5 s so keys
  // refused together do not return together, and rounded up to whole seconds.
  const now = new Date();
  const reset = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const expected = (reset - now.getTime()) / 1000;
  const retryAfter = Number(stopped.headers['retry-after']);
  assert.ok(retryAfter >= expected - 1 && retryAfter <= expected + 5 + 1 + 1,
    `retry-after ${retryAfter} vs ${expected}`);
  const retryAfterMs = Number(stopped.headers['retry-after-ms']);
  assert.ok(retryAfterMs >= (expected - 1) * 1000 && retryAfterMs <= (expected + 5 + 1) * 1000,
    `retry-after-ms ${retryAfterMs} vs ${expected} s`);
  const listed = JSON.parse((await admin('GET', '/admin/keys')).body).keys;
  const budget = listed.find((k) => k.name === 'budget');
  assert.equal(budget.monthly_budget, 0.01);
  // The gateway charged the usage the upstream reported at the deployment's prices, once: the
  // refused request cost nothing.
  const spent = budget.usage.spent_this_month;
  assert.ok(typeof spent === 'number' && Math.abs(spent - cost) < 1e-9,
            `spent_this_month ${spent}, expected ${cost} for ${JSON.stringify(usage)}`);
  assert.ok(spent > budget.monthly_budget, 'the one answer spent the budget');
  const metrics = await gateway.metrics(MASTER);
  assert.match(metrics, /switchyard_key_refusals_total\{key="budget",reason="budget"\} 1\n/);
});

test('a key with fallbacks off never walks the fallback chain', async () => {
  await mock.reset();
  const open = await chat(KEYS.OPEN_KEY, { model: 'failing' });
  assert.equal(open.status, 200, 'with fallbacks the chain reaches b');
  const closed = await chat(KEYS.NOFB_KEY, { model: 'failing' });
  assert.equal(closed.status, 500);
  const hitsB = (await mock.stats()).requests.filter((r) => r.model === 'model-b');
  assert.equal(hitsB.length, 1, 'only the key with fallbacks reached b');
});

test('admin endpoints manage keys at run time with the master key', async () => {
  assert.equal((await admin('GET', '/admin/keys', undefined, KEYS.OPEN_KEY)).status, 401);
  assert.equal((await admin('POST', '/admin/keys', { name: 'x' }, null)).status, 401);
  const created = await admin('POST', '/admin/keys', { name: 'runtime', rpm: 2, models: ['a'] });
  assert.equal(created.status, 201);
  const body = JSON.parse(created.body);
  assert.match(body.key, /^sk-sy-[0-9a-f]{48}$/);
  assert.equal(body.rpm, 2);
  assert.equal(body.source, 'admin');
  assert.equal((await chat(body.key)).status, 200);
  assert.equal((await chat(body.key)).status, 200);
  assert.equal((await chat(body.key)).status, 429);
  const listed = JSON.parse((await admin('GET', '/admin/keys')).body).keys;
  const runtime = listed.find((k) => k.name === 'runtime');
  assert.equal(runtime.usage.requests_last_minute, 2);
  assert.ok(!JSON.stringify(listed).includes(body.key), 'the key is shown only once');
  assert.ok(!JSON.stringify(listed).match(/[0-9a-f]{64}/), 'nor its hash');
  assert.equal((await admin('POST', '/admin/keys', { name: 'runtime' })).status, 409);
  const bad = await admin('POST', '/admin/keys', { name: 'y', lane: 'nowhere' });
  assert.equal(bad.status, 400);
  assert.equal(JSON.parse(bad.body).error.param, 'lane');
  assert.equal((await admin('POST', '/admin/keys', { name: 'z', colour: 1 })).status, 400);
  assert.equal((await admin('POST', '/admin/keys', '{"name":')).status, 400);
  // A chosen key is accepted but never echoed.
  const chosen = await admin('POST', '/admin/keys', { name: 'chosen', key: 'sk-chosen-0123456789' });
  assert.equal(chosen.status, 201);
  assert.equal(JSON.parse(chosen.body).key, undefined);
  assert.equal((await chat('sk-chosen-0123456789')).status, 200);
  assert.equal((await admin('DELETE', '/admin/keys/runtime')).status, 200);
  assert.equal((await chat(body.key)).status, 401);
  assert.equal((await admin('DELETE', '/admin/keys/runtime')).status, 404);
});

test('an unknown x-switchyard-stream-mode is a 400 in the client\'s wire format, naming the header', async () => {
  await mock.reset();
  const openai = await chat(KEYS.OPEN_KEY, {}, { 'x-switchyard-stream-mode': 'sideways' });
  assert.equal(openai.status, 400, openai.body);
  const error = JSON.parse(openai.body).error;
  assert.equal(error.type, 'invalid_request_error');
  assert.equal(error.param, 'x-switchyard-stream-mode');
  assert.match(error.message, /'sideways' in x-switchyard-stream-mode/);
  assert.match(error.message, /'interactive' or 'background'/);
  const anthropic = await request(gateway.port, {
    path: '/v1/messages',
    headers: { 'x-api-key': KEYS.OPEN_KEY, 'anthropic-version': '2023-06-01',
               'x-switchyard-stream-mode': 'Background' },
    body: { model: 'a', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
  });
  assert.equal(anthropic.status, 400, anthropic.body);
  const envelope = JSON.parse(anthropic.body);
  assert.equal(envelope.type, 'error');
  assert.equal(envelope.error.type, 'invalid_request_error');
  assert.match(envelope.error.message, /x-switchyard-stream-mode/);
  assert.equal((await mock.stats()).requests.length, 0, 'neither reached the upstream');
  for (const mode of ['interactive', 'background']) {
    const served = await chat(KEYS.OPEN_KEY, { stream: true }, { 'x-switchyard-stream-mode': mode });
    assert.equal(served.status, 200, `${mode}: ${served.body}`);
  }
});

test('the admin API holds a key to the bounds the config file does', async () => {
  const accepted = await admin('POST', '/admin/keys',
                               { name: 'bounds-max', rpm: 1_000_000_000, tpm: 1_000_000_000_000,
                                 slow_start_ms: 86_400_000, monthly_budget: 0 });
  assert.equal(accepted.status, 201, accepted.body);
  for (const [field, value] of [['rpm', 1_000_000_001], ['tpm', 1_000_000_000_001],
                                ['slow_start_ms', 86_400_001], ['rpm', -1]]) {
    const refused = await admin('POST', '/admin/keys', { name: 'bounds-over', [field]: value });
    assert.equal(refused.status, 400, `${field} ${value}: ${refused.body}`);
    const error = JSON.parse(refused.body).error;
    assert.equal(error.param, field);
    assert.match(error.message, /must be a whole number from 0 to \d+\.$/);
  }
  const short = await admin('POST', '/admin/keys', { name: 'bounds-short', key: 'sk-15-character' });
  assert.equal(short.status, 400);
  assert.equal(JSON.parse(short.body).error.param, 'key');
  const mode = await admin('POST', '/admin/keys', { name: 'bounds-mode', stream_mode: 'bg' });
  assert.equal(mode.status, 400);
  assert.equal(JSON.parse(mode.body).error.param, 'stream_mode');
  assert.equal((await admin('DELETE', '/admin/keys/bounds-max')).status, 200);
});

test('a key deleted and created again under its name with another secret sees none of its answers',
     async () => {
  const make = async (secret) => {
    const created = await admin('POST', '/admin/keys', { name: 'reborn', key: secret });
    assert.equal(created.status, 201, created.body);
  };
  const ask = (secret) => chat(secret, { messages: [{ role: 'user', content: 'reborn' }] },
                               { 'idempotency-key': `reborn-${process.pid}` });
  await make('sk-reborn-first-0123456789');
  const first = await ask('sk-reborn-first-0123456789');
  assert.equal(first.status, 200);
  assert.equal((await ask('sk-reborn-first-0123456789')).headers['x-switchyard-idempotent-replay'],
               'true');
  assert.equal((await admin('DELETE', '/admin/keys/reborn')).status, 200);
  await make('sk-reborn-second-0123456789');
  const second = await ask('sk-reborn-second-0123456789');
  assert.equal(second.status, 200);
  assert.equal(second.headers['x-switchyard-idempotent-replay'], undefined,
               'the new key was given the old key\'s answer');
  assert.equal((await admin('DELETE', '/admin/keys/reborn')).status, 200);
});
