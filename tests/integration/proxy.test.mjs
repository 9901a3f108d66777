// Non-streaming proxying through a real gateway to the real mock provider.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, group, metricValue, eventually } from './harness.mjs';

const KEY = 'sk-test-upstream-key-123';
let mock;
let gateway;

before(async () => {
  mock = await startMock(['--require-key', KEY]);
  gateway = await startGateway(`
models:
  - name: chat
    deployments:
      - {name: chat-primary, provider: openai, model: gpt-4.1-mock, api_key: os.environ/TEST_UPSTREAM_KEY, api_base: "http://127.0.0.1:${mock.port}/v1"}
  - name: split
    deployments:
      - {name: split-a, model: split-a, api_key: os.environ/TEST_UPSTREAM_KEY, api_base: "http://127.0.0.1:${mock.port}/v1", weight: 3}
      - {name: split-b, model: split-b, api_key: os.environ/TEST_UPSTREAM_KEY, api_base: "http://127.0.0.1:${mock.port}/v1", weight: 1}
${group('nokey', mock.port)}  - name: limited
    deployments:
      - {name: limited-1, model: limited, api_key: os.environ/TEST_UPSTREAM_KEY, api_base: "http://127.0.0.1:${mock.port}/v1"}
`, { env: { TEST_UPSTREAM_KEY: KEY } });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

test('a chat completion goes upstream with the deployment model and key', async () => {
  await mock.reset();
  const res = await request(gateway.port, {
    body: { model: 'chat', messages: [{ role: 'user', content: 'Say hi' }] },
  });
  assert.equal(res.status, 200, res.body);
  const body = JSON.parse(res.body);
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.model, 'gpt-4.1-mock');
  assert.equal(body.choices[0].message.role, 'assistant');
  assert.match(body.choices[0].message.content, /gpt-4\.1-mock/);
  assert.ok(body.usage.total_tokens > 0);

  assert.equal(res.headers['x-switchyard-model-group'], 'chat');
  assert.equal(res.headers['x-switchyard-deployment'], 'chat-primary');
  assert.equal(res.headers['x-switchyard-model'], 'gpt-4.1-mock');
  assert.equal(res.headers['x-switchyard-attempts'], '1');
  assert.match(res.headers['x-request-id'], /^req_[0-9a-f]{32}$/);
  assert.equal(res.headers['x-switchyard-upstream-request-id'], res.headers['x-request-id']);

  const stats = await mock.stats();
  assert.equal(stats.total, 1);
  assert.equal(stats.requests[0].model, 'gpt-4.1-mock');
  assert.equal(stats.requests[0].path, '/v1/chat/completions');
  assert.equal(stats.requests[0].headers.authorization, `Bearer ${KEY}`);
});

test('a deployment without a key sends no Authorization (and the mock refuses it as-is)', async () => {
  const res = await request(gateway.port, { body: { model: 'nokey', messages: [] } });
  assert.equal(res.status, 401);
  assert.deepEqual(JSON.parse(res.body), {
    error: { message: 'Incorrect API key provided.', type: 'invalid_request_error',
             param: null, code: 'invalid_api_key' },
  });
});

test('client errors pass through unchanged, with retry-after', async () => {
  await mock.scenario([{ match: { model: 'limited' }, fault: 'status=422;retry_after=7', times: 1 }]);
  const res = await request(gateway.port, { body: { model: 'limited', messages: [] } });
  assert.equal(res.status, 422);
  assert.equal(res.headers['retry-after'], '7');
  assert.equal(JSON.parse(res.body).error.type, 'invalid_request_error');
  assert.ok(!('attempts' in JSON.parse(res.body).error));
  assert.equal(res.headers['x-switchyard-deployment'], 'limited-1');
  const after = await request(gateway.port, { body: { model: 'limited', messages: [] } });
  assert.equal(after.status, 200, 'the rule applied once');
  await mock.scenario([]);
});

test('weights spread requests across deployments', async () => {
  await mock.reset();
  const n = 200;
  for (let i = 0; i < n; i += 20) {
    await Promise.all(Array.from({ length: 20 }, () =>
      request(gateway.port, { body: { model: 'split', messages: [] } })));
  }
  const models = (await mock.stats()).models;
  const a = models['split-a'] ?? 0;
  const b = models['split-b'] ?? 0;
  assert.equal(a + b, n);
  // Expected 150/50; a binomial 3-sigma band is about +-18.
  assert.ok(a > 125 && a < 175, `split-a got ${a} of ${n}`);
});

test('upstream connections are kept alive and reused', async () => {
  const before = metricValue(await gateway.metrics(), 'switchyard_upstream_connects_total');
  for (let i = 0; i < 30; i++) {
    const res = await request(gateway.port, { body: { model: 'chat', messages: [] } });
    assert.equal(res.status, 200);
  }
  const after = metricValue(await gateway.metrics(), 'switchyard_upstream_connects_total');
  // Sequential requests: at most one new connection per worker.
  assert.ok(after - before <= 2, `${after - before} new upstream connections for 30 requests`);
});

test('a keep-alive connection the upstream closed is replaced transparently', async () => {
  // close=1: the mock answers and closes; the pooled connection is dead on the next request.
  await mock.scenario([{ match: { model: 'gpt-4.1-mock' }, fault: 'close=1', times: 4 }]);
  for (let i = 0; i < 8; i++) {
    const res = await request(gateway.port, { body: { model: 'chat', messages: [] } });
    assert.equal(res.status, 200, `request ${i}: ${res.body}`);
  }
  await mock.scenario([]);
});

test('/v1/models lists the model groups', async () => {
  const res = await request(gateway.port, { method: 'GET', path: '/v1/models' });
  assert.equal(res.status, 200);
  const body = JSON.parse(res.body);
  assert.equal(body.object, 'list');
  assert.deepEqual(body.data.map((m) => m.id), ['chat', 'split', 'nokey', 'limited']);
  assert.ok(body.data.every((m) => m.object === 'model'));
});

test('health endpoints answer', async () => {
  assert.equal((await request(gateway.port, { method: 'GET', path: '/health/live' })).status, 200);
  assert.equal((await request(gateway.port, { method: 'GET', path: '/health/ready' })).status, 200);
});

test('/metrics counts requests by group, deployment and status', async () => {
  // The previous request's bookkeeping may finish just after its response reached the client.
  const text = await eventually(async () => {
    const scrape = await gateway.metrics();
    return metricValue(scrape, 'switchyard_in_flight_requests') === 1 && scrape;
  }, { what: 'the scrape alone in flight', intervalMs: 20 });
  const ok = metricValue(text,
    'switchyard_requests_total{route="chat",model_group="chat",deployment="chat-primary",status="200"}');
  assert.ok(ok >= 31, `chat-primary 200s: ${ok}`);
  assert.equal(metricValue(text,
    'switchyard_requests_total{route="chat",model_group="limited",deployment="limited-1",status="422"}'), 1);
  assert.match(text,
    /switchyard_request_duration_seconds_bucket\{route="chat",model_group="chat",deployment="chat-primary",le="\+Inf"\} \d+/);
  // Tokens and the gauges read from the runtime at scrape time.
  assert.ok(metricValue(text,
    'switchyard_tokens_total{key="",deployment="chat-primary",direction="output"}') > 0);
  assert.equal(metricValue(text,
    'switchyard_deployment_state{model_group="chat",deployment="chat-primary",state="healthy"}'), 1);
  assert.equal(metricValue(text,
    'switchyard_deployment_state{model_group="chat",deployment="chat-primary",state="cooling"}'), 0);
  assert.ok(metricValue(text, 'switchyard_retry_amplification_ratio') >= 1);
  assert.equal(metricValue(text, 'switchyard_in_flight_requests'), 1, 'only the scrape itself');
});

test('the access log has one line per request with the upstream request id and no secrets', async () => {
  const counted = await request(gateway.port, {
    body: { model: 'chat', messages: [{ role: 'user', content: 'Count these tokens' }] },
  });
  assert.equal(counted.status, 200, counted.body);
  const usage = JSON.parse(counted.body).usage;
  const upstreamId = counted.headers['x-switchyard-upstream-request-id'];
  await eventually(() => gateway.logs.some((l) => l.upstream_request_id === upstreamId),
                   { what: 'the access-log line of the last request' });
  const chat = gateway.logs.filter((l) => l.route === 'chat' && l.model_group === 'chat');
  assert.ok(chat.length >= 31);
  const line = chat[0];
  for (const key of ['time', 'method', 'path', 'model_group', 'deployment', 'status', 'latency_ms',
                     'upstream_request_id', 'bytes_in', 'bytes_out']) {
    assert.ok(key in line, `log has ${key}`);
  }
  assert.equal(line.deployment, 'chat-primary');
  assert.match(line.upstream_request_id, /^req_/);
  assert.ok(Number.isInteger(line.input_tokens) && line.input_tokens > 0, `${line.input_tokens}`);
  assert.ok(Number.isInteger(line.output_tokens) && line.output_tokens > 0, `${line.output_tokens}`);
  // The logged tokens are the usage the upstream reported, which the client received unchanged.
  assert.ok(Number.isInteger(usage.prompt_tokens) && usage.prompt_tokens > 0, JSON.stringify(usage));
  const countedLine = chat.find(
    (l) => l.upstream_request_id === counted.headers['x-switchyard-upstream-request-id']);
  assert.ok(countedLine, 'the last request has its line');
  assert.deepEqual([countedLine.input_tokens, countedLine.output_tokens],
                   [usage.prompt_tokens, usage.completion_tokens]);
  const all = JSON.stringify(gateway.logs) + gateway.stderr();
  assert.ok(!all.includes(KEY), 'the upstream key never appears in logs');
  assert.ok(!all.includes('Say hi'), 'prompt text never appears in logs');
});
