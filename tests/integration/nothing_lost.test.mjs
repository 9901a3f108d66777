// Every request that enters gets exactly one answer, whatever the provider or the gateway itself
// does: a handler that throws, a request nested deep enough to trip a parser, a stream that ends
// cleanly without its end event, a 200 whose JSON is cut short. Regression tests for the losses
// seen before (each named after what it lost).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  startMock, startGateway, request, rawExchange, dechunk, metricValue, sleep, eventually,
} from './harness.mjs';

let mock;
let gateway;

before(async () => {
  mock = await startMock();
  const p = mock.port;
  const openai = (name) => `{name: ${name}, model: ${name}, api_base: "http://127.0.0.1:${p}/v1"}`;
  gateway = await startGateway(`
retry: {base_ms: 10, cap_ms: 50}
health: {allowed_fails: 2, cooldown_ms: 60000}
models:
  - name: plain
    deployments: [${openai('plain-model')}]
  - name: to-anthropic
    deployments: [{name: claude, provider: anthropic, model: claude-sonnet-4-5,
                   api_key: os.environ/ANT_KEY, api_base: "http://127.0.0.1:${p}/v1"}]
  - name: rewritten
    deployments: [${openai('rewritten-model')}]
  - name: endless
    strategy: priority
    deployments: [${openai('no-end')}, ${openai('with-end')}]
  - name: cut
    deployments: [${openai('cut-model')}]
  - name: cut-once
    deployments: [${openai('cut-once-model')}]
  - name: unended
    deployments: [${openai('unended-model')}]
  - name: slow
    deployments: [${openai('slow-503')}]
`, { env: { ANT_KEY: 'sk-ant-test' } });
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const sent = async (model) => (await mock.stats()).requests.filter((r) => r.model === model);

function raw(path, body, headers = {}) {
  const payload = JSON.stringify(body);
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${extra}` +
    `content-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n${payload}`;
}

function parseStream(text) {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end);
  const status = Number(head.match(/^HTTP\/1\.1 (\d+)/)[1]);
  const headers = Object.fromEntries(head.split('\r\n').slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
  }));
  const body = text.slice(end + 4);
  if (status !== 200 || !headers['transfer-encoding']) return { status, headers, body };
  const events = dechunk(body).split('\n\n').filter(Boolean);
  return { status, headers, events };
}

const words = (events) => events.map((e) => e.replace(/^data: /, '')).filter((e) => e !== '[DONE]')
  .map((e) => JSON.parse(e).choices?.[0]?.delta?.content).filter((c) => c && c.trim());

// A tool whose JSON Schema is `levels` objects deep: the request nests about 2 * levels + 6.
function deepTool(levels) {
  let schema = { type: 'string' };
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { inner: schema } };
  return [{ type: 'function', function: { name: 'deep', parameters: schema } }];
}

async function gaugesSettle() {
  await eventually(async () => {
    const text = await gateway.metrics();
    return metricValue(text, 'switchyard_in_flight_requests') === 1 &&
      metricValue(text, 'switchyard_downstream_connections') === 1;
  }, { what: 'the in-flight and connection gauges to come back to the scrape alone',
       intervalMs: 20 });
}

test('a handler that throws before answering: a 500 in the client\'s format, logged, gauges back', async () => {
  const openai = await request(gateway.port, {
    body: { model: 'plain', messages: [{ role: 'user', content: 'Hi' }] },
    headers: { 'x-switchyard-test-fault': 'before-answer' },
  });
  assert.equal(openai.status, 500);
  assert.equal(JSON.parse(openai.body).error.type, 'server_error');
  assert.equal(openai.headers.connection, 'close');
  const anthropic = await request(gateway.port, {
    path: '/v1/messages',
    body: { model: 'plain', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] },
    headers: { 'x-switchyard-test-fault': 'before-answer' },
  });
  assert.equal(anthropic.status, 500);
  const body = JSON.parse(anthropic.body);
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'api_error');
  const internal = () =>
    gateway.logs.filter((l) => l.status === 500 && /internal error/.test(l.error ?? ''));
  await eventually(
    () => internal().length >= 2 && /"event":"internal_error"/.test(gateway.stderr()),
    { what: 'the access-log lines and the internal_error event' });
  const logged = internal();
  assert.equal(logged.length, 2, 'one access-log line each');
  assert.match(gateway.stderr(), /"event":"internal_error"/);
  await gaugesSettle();
});

test('a handler that throws mid-stream: the stream ends with an error event and a clean end', async () => {
  await mock.scenario([{ match: { model: 'plain-model' }, fault: 'chunks=4;delay_chunks_ms=20' }]);
  const { text } = await rawExchange(gateway.port, raw('/v1/chat/completions',
    { model: 'plain', stream: true, messages: [{ role: 'user', content: 'Hi' }] },
    { 'x-switchyard-test-fault': 'mid-stream' }));
  await mock.scenario([]);
  const r = parseStream(text);
  assert.equal(r.status, 200);
  const last = JSON.parse(r.events.at(-1).replace(/^data: /, ''));
  assert.equal(last.error.code, 'stream_interrupted');
  await gaugesSettle();
});

test('a request nested deeper than the default parser depth reaches an Anthropic deployment', async () => {
  const res = await request(gateway.port, {
    body: { model: 'to-anthropic', tools: deepTool(25), messages: [{ role: 'user', content: 'Hi' }] },
  });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-deployment'], 'claude');
  const upstream = (await sent('claude-sonnet-4-5')).at(-1);
  assert.equal(upstream.path, '/v1/messages');
  assert.match(upstream.body, /"input_schema":\{"type":"object"/, 'the deep tool, translated');
});

test('a deep request rewritten for an OpenAI deployment names the deployment\'s model', async () => {
  const res = await request(gateway.port, {
    body: { model: 'rewritten', tools: deepTool(25), messages: [{ role: 'user', content: 'Hi' }] },
  });
  assert.equal(res.status, 200, res.body);
  const log = await sent('rewritten-model');
  assert.equal(log.length, 1, 'the upstream saw the deployment\'s model, not the group name');
  assert.equal((await sent('rewritten')).length, 0);
});

test('past the documented depth (128) both front APIs refuse with a 400, never a lost request', async () => {
  for (const [path, extra] of [['/v1/chat/completions', {}], ['/v1/messages', { max_tokens: 16 }]]) {
    const res = await request(gateway.port, {
      path,
      body: { model: 'plain', tools: deepTool(70), messages: [{ role: 'user', content: 'Hi' }], ...extra },
    });
    assert.equal(res.status, 400, `${path}: ${res.body}`);
  }
  await gaugesSettle();
});

test('a stream that ends cleanly without [DONE] after content: an error event, and it counts', async () => {
  await mock.scenario([{ match: { model: 'no-end' }, fault: 'chunks=5;end_after_chunks=2' }]);
  const served = [];
  for (let i = 0; i < 4; i++) {
    const r = parseStream((await rawExchange(gateway.port, raw('/v1/chat/completions',
      { model: 'endless', stream: true, messages: [{ role: 'user', content: 'Hi' }] }))).text);
    assert.equal(r.status, 200);
    served.push(r.headers['x-switchyard-deployment']);
    const last = r.events.at(-1).replace(/^data: /, '');
    if (r.headers['x-switchyard-deployment'] === 'no-end') {
      assert.equal(words(r.events).length, 2);
      const error = JSON.parse(last).error;
      assert.equal(error.code, 'stream_interrupted');
      assert.match(error.message, /ended before its end event/);
    } else {
      assert.equal(last, '[DONE]');
    }
  }
  // allowed_fails 2: the third truncated stream benches it.
  assert.deepEqual(served, ['no-end', 'no-end', 'no-end', 'with-end']);
  await mock.scenario([]);
});

test('a stream that ends without [DONE] before any content is retried', async () => {
  await mock.scenario([{ match: { model: 'unended-model' }, fault: 'chunks=3;end_after_chunks=0', times: 1 }]);
  const r = parseStream((await rawExchange(gateway.port, raw('/v1/chat/completions',
    { model: 'unended', stream: true, messages: [{ role: 'user', content: 'Hi' }] }))).text);
  assert.equal(r.status, 200);
  assert.equal(r.events.at(-1), 'data: [DONE]');
  assert.equal(words(r.events).length, 4, 'the retry\'s whole answer');
  assert.equal(r.headers['x-switchyard-attempts'], '2');
  await mock.scenario([]);
});

test('a 200 whose JSON is cut short is retried, never passed on', async () => {
  await mock.scenario([{ match: { model: 'cut-once-model' }, fault: 'truncate_body=40', times: 1 }]);
  const once = await request(gateway.port, {
    body: { model: 'cut-once', messages: [{ role: 'user', content: 'Hi' }] },
  });
  assert.equal(once.status, 200);
  assert.equal(JSON.parse(once.body).object, 'chat.completion');
  assert.equal(once.headers['x-switchyard-attempts'], '2');

  await mock.scenario([{ match: { model: 'cut-model' }, fault: 'truncate_body=40' }]);
  const always = await request(gateway.port, {
    body: { model: 'cut', messages: [{ role: 'user', content: 'Hi' }] },
  });
  assert.equal(always.status, 502);
  const error = JSON.parse(always.body).error;
  assert.equal(error.attempts.length, 2, 'one retry (class_retries.protocol)');
  assert.ok(error.attempts.every((a) => a.error_class === 'protocol' && a.status === null),
            JSON.stringify(error.attempts));
  await mock.scenario([]);
});

test('a client that leaves a non-streaming request stops the upstream work at once', async () => {
  await mock.scenario([{ match: { model: 'slow-503' }, fault: 'status=503;delay_headers_ms=1500' }]);
  const socket = net.connect(gateway.port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  socket.write(raw('/v1/chat/completions', { model: 'slow', messages: [{ role: 'user', content: 'Hi' }] }));
  // The client leaves while the upstream works on the attempt.
  await eventually(async () => (await sent('slow-503')).length === 1,
                   { what: 'the attempt to reach the upstream' });
  socket.destroy();
  const line = await eventually(() => gateway.logs.find((l) => l.model_group === 'slow'),
                                { what: 'the request logged', timeoutMs: 1000, intervalMs: 20 })
    .catch(() => undefined);
  assert.ok(line, 'the request was logged within a second of the client leaving');
  assert.match(line.error, /client went away/);
  await gaugesSettle();
  await sleep(2000);  // two 1.5 s attempts would have been made for nobody before
  assert.equal((await sent('slow-503')).length, 1, 'one upstream call, then nothing more');
  await mock.scenario([]);
});
