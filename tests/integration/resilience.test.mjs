// The one layer that retries: each row of the classification table against the real mock,
// measured on the mock's own request log (what actually reached the upstream, and when).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, metricValue, eventually } from './harness.mjs';

let mock;
let gateway;

function deployment(mockPort, model, extra = '') {
  return `{name: ${model}, model: ${model}, api_base: "http://127.0.0.1:${mockPort}/v1"${extra}}`;
}

before(async () => {
  mock = await startMock();
  await mock.scenario([
    { match: { model: 'ra' }, fault: 'status=429;retry_after=1', times: 1 },
    { match: { model: 'ra-ms' }, fault: 'status=429;retry_after_ms=100' },
    { match: { model: 'spent' }, fault: 'error=insufficient_quota' },
    { match: { model: 'org-spent' }, fault: 'error=organization_spend_limit' },
    { match: { model: 'busy' }, fault: 'status=529' },
    { match: { model: 'gw-timeout' }, fault: 'status=504' },
    { match: { model: 'bad-request' }, fault: 'status=400' },
    { match: { model: 'unauthorized' }, fault: 'status=401' },
    { match: { model: 'missing' }, fault: 'status=404' },
    { match: { model: 'too-large' }, fault: 'status=413' },
    { match: { model: 'short-context' }, fault: 'error=context_length' },
    { match: { model: 'strict-filter' }, fault: 'error=content_policy' },
    { match: { model: 'flaky' }, fault: 'status=503' },
    { match: { model: 'slow-fail' }, fault: 'status=503' },
    { match: { model: 'no-retry' }, fault: 'status=503;x_should_retry=false' },
    { match: { model: 'retry-me' }, fault: 'status=400;x_should_retry=true', times: 1 },
    { match: { model: 'conflict' }, fault: 'status=409', times: 1 },
    { match: { model: 'prompt-primary' }, fault: 'status=503;x_should_retry=false' },
  ]);
  const p = mock.port;
  gateway = await startGateway(`
retry:
  max_attempts: 6
  base_ms: 50
  cap_ms: 200
  deadline_ms: 10000
  class_retries: {overloaded: 2, server_error: 3, timeout: 1, rate_limited: 3}
  budget: {max_tokens: 1000, token_ratio: 1}
models:
  - name: ratelimited
    deployments: [${deployment(p, 'ra')}]
  - name: rate-limited-ms
    deployments: [${deployment(p, 'ra-ms')}]
  - name: spend
    deployments: [${deployment(p, 'spent')}]
    fallbacks: [backup]
  - name: org-spend
    deployments: [${deployment(p, 'org-spent')}]
  - name: overloaded
    deployments: [${deployment(p, 'busy')}]
    fallbacks: [backup]
  - name: timeout
    deployments: [${deployment(p, 'gw-timeout')}]
  - name: client-errors
    deployments: [${deployment(p, 'bad-request')}]
    fallbacks: [backup]
  - name: unauthorized
    deployments: [${deployment(p, 'unauthorized')}]
  - name: missing
    deployments: [${deployment(p, 'missing')}]
  - name: too-large
    deployments: [${deployment(p, 'too-large')}]
  - name: small
    deployments: [${deployment(p, 'short-context')}]
    fallbacks: [backup]
    context_window_fallbacks: [long]
  - name: filtered
    deployments: [${deployment(p, 'strict-filter')}]
    fallbacks: [backup]
    content_policy_fallbacks: [lenient]
  - name: mixed
    deployments: [${deployment(p, 'flaky')}, ${deployment(p, 'steady')}]
  - name: slow-failing
    deployments: [${deployment(p, 'slow-fail')}]
  - name: no-retry
    deployments: [${deployment(p, 'no-retry')}]
  - name: retry-me
    deployments: [${deployment(p, 'retry-me')}]
  - name: conflict
    deployments: [${deployment(p, 'conflict')}]
  - name: prompted
    deployments: [${deployment(p, 'prompt-primary')}]
    fallbacks: [backup]
  - name: backup
    deployments: [${deployment(p, 'backup-model')}]
    prompt: {system: "You are the backup assistant."}
    params: {temperature: 0.2, max_tokens: 64}
  - name: long
    deployments: [${deployment(p, 'long-context')}]
  - name: lenient
    deployments: [${deployment(p, 'lenient-model')}]
`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const chat = (model, extra = {}, headers = {}) =>
  request(gateway.port, { body: { model, messages: [{ role: 'user', content: 'Hello' }], ...extra },
                          headers });

// The mock's log entries for one upstream model, in arrival order.
async function hits(model) {
  return (await mock.stats()).requests.filter((r) => r.model === model);
}

test('429 with retry-after: no attempt reaches that deployment before the time, from any request', async () => {
  const first = chat('ratelimited');
  // The first request's 429 (retry-after: 1) is recorded: the deployment is rate-limited.
  await eventually(async () => metricValue(await gateway.metrics(),
    'switchyard_deployment_state{model_group="ratelimited",deployment="ra",state="rate_limited"}'
  ) === 1, { what: 'ra rate-limited by the first request\'s 429' });
  const second = chat('ratelimited');  // arrives while the deployment is rate-limited
  const [a, b] = await Promise.all([first, second]);
  assert.equal(a.status, 200, a.body);
  assert.equal(b.status, 200, b.body);
  const log = await hits('ra');
  assert.equal(log[0].status, 429);
  assert.equal(log.length, 3, 'one 429, then one success for each request');
  for (const later of log.slice(1)) {
    assert.ok(later.t_ms - log[0].t_ms >= 995,
              `attempt ${later.t_ms - log[0].t_ms} ms after the 429 with retry-after: 1`);
  }
  assert.equal(a.headers['x-switchyard-attempts'], '2');
  assert.equal(b.headers['x-switchyard-attempts'], '1', 'the second request waited instead of trying');
});

test('a spend limit (insufficient_quota) is never retried: straight to the fallback', async () => {
  const res = await chat('spend');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'backup');
  assert.equal(res.headers['x-switchyard-fallback-depth'], '1');
  assert.equal(res.headers['x-switchyard-attempts'], '2');
  assert.equal((await hits('spent')).length, 1);
  // The spend cap disabled the deployment for every request: the next one goes straight on.
  const next = await chat('spend');
  assert.equal(next.headers['x-switchyard-attempts'], '1');
  assert.equal((await hits('spent')).length, 1);
});

test('a spend limit with nowhere to go is an honest error listing the attempt', async () => {
  const res = await chat('org-spend');
  assert.equal(res.status, 429);
  const error = JSON.parse(res.body).error;
  assert.equal(error.code, 'all_attempts_failed');
  assert.equal(error.attempts.length, 1);
  assert.equal(error.attempts[0].error_class, 'quota_exhausted');
  assert.equal((await hits('org-spent')).length, 1);
});

test('529: backoff, retries up to the class cap, then the fallback', async () => {
  const res = await chat('overloaded');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'backup');
  assert.equal(res.headers['x-switchyard-attempts'], '4');
  const log = await hits('busy');
  assert.equal(log.length, 3, 'the first attempt and 2 retries (class_retries.overloaded)');
  const backup = (await hits('backup-model')).at(-1);
  assert.ok(backup.t_ms >= log[2].t_ms, 'the fallback came after the retries');
});

test('504 is retried once', async () => {
  const res = await chat('timeout');
  assert.equal(res.status, 504);
  const error = JSON.parse(res.body).error;
  assert.equal(error.attempts.length, 2);
  assert.ok(error.attempts.every((a) => a.status === 504 && a.error_class === 'timeout'));
  assert.ok(error.attempts.every((a) => /^req_/.test(a.upstream_request_id)));
  // A wait is reported on the attempt it preceded: none before the first; before the retry one
  // full-jitter draw for retry 1, uniform(0, base_ms 50), in whole milliseconds.
  assert.equal(error.attempts[0].wait_ms, 0);
  const wait = error.attempts[1].wait_ms;
  assert.ok(Number.isInteger(wait) && wait >= 0 && wait <= 50, `wait_ms ${wait} (base_ms 50)`);
  const log = await hits('gw-timeout');
  assert.equal(log.length, 2);
  // The reported wait is the one that separated the attempts upstream: the retry arrived no
  // sooner than it, and not much later (the rest is one loopback round trip).
  const gap = log[1].t_ms - log[0].t_ms;
  assert.ok(gap >= wait - 1 && gap - wait < 45, `attempts ${gap} ms apart, wait_ms ${wait}`);
});

test('a retry-after wait is reported exactly, on the attempt that followed it', async () => {
  // retry_after_ms 100 is at least the jitter ceiling of the first two retries (50, 100 ms) and
  // bounds the third's (200 ms) from below: whatever the draw, every retry waits about 100 ms and
  // at most max(100, its ceiling). A wait that is not recorded reads 0 and fails.
  const res = await chat('rate-limited-ms');
  assert.equal(res.status, 429, res.body);
  const error = JSON.parse(res.body).error;
  assert.equal(error.attempts.length, 4,
               'the first attempt and 3 retries (class_retries.rate_limited)');
  assert.ok(error.attempts.every((a) => a.status === 429 && a.error_class === 'rate_limited'));
  assert.equal(error.attempts[0].wait_ms, 0);
  const log = await hits('ra-ms');
  assert.equal(log.length, 4);
  for (let i = 1; i < 4; i++) {
    const wait = error.attempts[i].wait_ms;
    const ceiling = Math.max(100, Math.min(200, 50 * 2 ** (i - 1)));
    // Counted from the end of the previous attempt: a millisecond or two may have gone by.
    assert.ok(Number.isInteger(wait) && wait >= 90 && wait <= ceiling,
              `retry ${i}: wait_ms ${wait}, expected 90..${ceiling}`);
    assert.ok(log[i].t_ms - log[i - 1].t_ms >= wait - 1,
              `retry ${i} arrived ${log[i].t_ms - log[i - 1].t_ms} ms after the last, wait_ms ${wait}`);
  }
});

test('400, 401, 404 and 413 reach the upstream exactly once and pass through unchanged', async () => {
  for (const [group, model, status] of [['client-errors', 'bad-request', 400],
                                        ['unauthorized', 'unauthorized', 401],
                                        ['missing', 'missing', 404],
                                        ['too-large', 'too-large', 413]]) {
    const res = await chat(group);
    assert.equal(res.status, status, `${group}: ${res.body}`);
    const body = JSON.parse(res.body);
    assert.ok(!('attempts' in body.error), 'the provider body, unchanged');
    assert.equal((await hits(model)).length, 1, `${model} called once`);
    assert.equal(res.headers['x-switchyard-attempts'], '1');
  }
});

test('a context-window error goes to context_window_fallbacks, not the ordinary fallbacks', async () => {
  const before = (await hits('backup-model')).length;
  const res = await chat('small');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'long');
  assert.equal((await hits('short-context')).length, 1);
  assert.equal((await hits('long-context')).length, 1);
  assert.equal((await hits('backup-model')).length, before);
});

test('a content-policy refusal goes to content_policy_fallbacks', async () => {
  const res = await chat('filtered');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'lenient');
  assert.equal((await hits('strict-filter')).length, 1);
});

test('another healthy deployment serves at once instead of waiting', async () => {
  for (let i = 0; i < 10; i++) {
    const started = Date.now();
    const res = await chat('mixed');
    assert.equal(res.status, 200, res.body);
    assert.equal(res.headers['x-switchyard-deployment'], 'steady');
    assert.ok(Number(res.headers['x-switchyard-attempts']) <= 2);
    assert.ok(Date.now() - started < 1000);
  }
  const flaky = await hits('flaky');
  const steady = await hits('steady');
  // A flaky first attempt is followed by the steady one with no backoff in between.
  for (const f of flaky) {
    const next = steady.find((s) => s.t_ms >= f.t_ms);
    assert.ok(next && next.t_ms - f.t_ms < 45, `moved after ${next?.t_ms - f.t_ms} ms (base_ms 50)`);
  }
});

test('the deadline bounds every attempt and wait', async () => {
  const started = Date.now();
  const res = await chat('slow-failing', {}, { 'x-switchyard-deadline-ms': '120' });
  const took = Date.now() - started;
  assert.equal(res.status, 503);
  assert.ok(took < 600, `answered after ${took} ms with a 120 ms deadline`);
  const error = JSON.parse(res.body).error;
  assert.ok(error.attempts.length >= 1 && error.attempts.length <= 3, `${error.attempts.length} attempts`);
  // Nothing before the first attempt; retry i waits one full-jitter draw,
  // uniform(0, min(cap_ms 200, base_ms 50 * 2^(i-1))).
  error.attempts.forEach((a, i) => {
    const ceiling = i === 0 ? 0 : Math.min(200, 50 * 2 ** (i - 1));
    assert.ok(Number.isInteger(a.wait_ms) && a.wait_ms >= 0 && a.wait_ms <= ceiling,
              `attempt ${i}: wait_ms ${a.wait_ms}, ceiling ${ceiling}`);
  });
  const waited = error.attempts.reduce((sum, a) => sum + a.wait_ms, 0);
  assert.ok(waited <= 120, `waited ${waited} ms in total`);
});

test('x-should-retry: false stops retries; true makes a 400 retryable', async () => {
  const no = await chat('no-retry');
  assert.equal(no.status, 503);
  assert.equal((await hits('no-retry')).length, 1);
  const yes = await chat('retry-me');
  assert.equal(yes.status, 200, yes.body);
  assert.equal((await hits('retry-me')).length, 2);
});

test('409 is retried', async () => {
  const res = await chat('conflict');
  assert.equal(res.status, 200);
  assert.equal((await hits('conflict')).length, 2);
});

test('a fallback entry brings its own system prompt and parameters', async () => {
  await chat('prompted', { messages: [{ role: 'system', content: 'Original system' },
                                      { role: 'user', content: 'Hello' }], temperature: 1 });
  const sent = JSON.parse((await hits('backup-model')).at(-1).body);
  assert.equal(sent.model, 'backup-model');
  assert.deepEqual(sent.messages, [{ role: 'system', content: 'You are the backup assistant.' },
                                   { role: 'user', content: 'Hello' }]);
  assert.equal(sent.temperature, 0.2);
  assert.equal(sent.max_tokens, 64);
  const primary = JSON.parse((await hits('prompt-primary')).at(-1).body);
  assert.equal(primary.messages[0].content, 'Original system', 'the primary got the client prompt');
});

test('per-request models list, fallbacks override and no-fallbacks switch', async () => {
  let res = await request(gateway.port, { body: { models: ['org-spend', 'long'], messages: [] } });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'long');
  const sent = JSON.parse((await hits('long-context')).at(-1).body);
  assert.ok(!('models' in sent) && !('fallbacks' in sent), 'gateway fields are not sent upstream');

  res = await chat('spend', { fallbacks: ['lenient'] });
  assert.equal(res.headers['x-switchyard-model-group'], 'lenient');

  // Its only deployment hit a spend cap earlier and is disabled: nothing to try, no fallbacks.
  res = await chat('spend', {}, { 'x-switchyard-no-fallbacks': '1' });
  assert.equal(res.status, 503);
  assert.match(JSON.parse(res.body).error.message, /unavailable/);

  res = await chat('spend', { fallbacks: ['nope'] });
  assert.equal(res.status, 404);
});

test('client SDK retries on top of the gateway are counted', async () => {
  await chat('backup', {}, { 'x-stainless-retry-count': '1' });
  const text = await gateway.metrics();
  assert.ok(metricValue(text, 'switchyard_client_retries_total') >= 1);
  assert.ok(metricValue(text, 'switchyard_upstream_attempts_total{deployment="busy",error_class="overloaded"}') >= 3);
  await eventually(() => gateway.logs.some((l) => l.client_retry_count === 1),
                   { what: 'the access-log line of the SDK retry' });
  assert.ok(gateway.logs.some((l) => l.client_retry_count === 1));
});

test('during a total outage the retry budget holds amplification to about one attempt', async () => {
  const outageMock = await startMock();
  await outageMock.scenario([{ match: { model: 'down' }, fault: 'status=500' }]);
  const g = await startGateway(`
retry: {base_ms: 1, cap_ms: 2, class_retries: {server_error: 3}, budget: {max_tokens: 20, token_ratio: 0.1}}
# The breaker and cooldown are off here so that the figure measures the retry budget alone.
health: {allowed_fails: 1000, breaker: {consecutive_failures: 1000, minimum_calls: 100000}}
models:
  - name: only
    deployments: [{name: down, model: down, api_base: "http://127.0.0.1:${outageMock.port}/v1"}]
`).catch(async (error) => {
    await outageMock.stop();
    throw error;
  });
  try {
    const total = 200;
    const attemptsAfter = [];
    for (let i = 0; i < total; i++) {
      const before = (await outageMock.stats()).total;
      const res = await request(g.port, { body: { model: 'only', messages: [] } });
      assert.equal(res.status, 500);
      attemptsAfter.push((await outageMock.stats()).total - before);
    }
    const all = attemptsAfter.reduce((a, b) => a + b, 0);
    const tail = attemptsAfter.slice(50);
    const tailRatio = tail.reduce((a, b) => a + b, 0) / tail.length;
    console.log(`outage amplification: ${all} upstream attempts for ${total} requests ` +
                `(${(all / total).toFixed(3)}), ${tailRatio.toFixed(3)} after the first 50`);
    assert.ok(attemptsAfter[0] === 4, 'retries flow freely while the budget lasts');
    assert.ok(tailRatio <= 1.1, `attempts per request once the budget is spent: ${tailRatio}`);
  } finally {
    await g.stop();
    await outageMock.stop();
  }
});
