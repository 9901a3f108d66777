// Anthropic's Messages API in both directions: Anthropic clients to Anthropic and OpenAI
// deployments, OpenAI clients to Anthropic deployments, and a fallback chain that crosses
// providers — all against the real mock over real sockets.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, rawExchange, dechunk } from './harness.mjs';

const KEY = 'sk-ant-test-key';
let mock;
let gateway;

before(async () => {
  mock = await startMock(['--require-key', KEY]);
  const p = mock.port;
  const ant = (name, model = name) =>
    `{name: ${name}, provider: anthropic, model: ${model}, api_key: os.environ/ANT_KEY, api_base: "http://127.0.0.1:${p}/v1"}`;
  const oai = (name, model = name) =>
    `{name: ${name}, provider: openai, model: ${model}, api_key: os.environ/ANT_KEY, api_base: "http://127.0.0.1:${p}/v1"}`;
  gateway = await startGateway(`
server: {master_key: os.environ/ANT_KEY}
retry: {base_ms: 10, cap_ms: 50, class_retries: {overloaded: 1}}
models:
  - name: claude
    deployments: [${ant('claude-a', 'claude-sonnet-4-5')}]
  - name: gpt
    deployments: [${oai('gpt-a', 'gpt-4.1')}]
  - name: claude-then-gpt
    deployments: [${ant('claude-overloaded')}]
    fallbacks: [gpt]
  - name: gpt-then-claude
    deployments: [${oai('gpt-overloaded')}]
    fallbacks: [claude]
  - name: claude-long
    deployments: [${ant('claude-short')}]
    context_window_fallbacks: [claude]
`, { env: { ANT_KEY: KEY } });
  await mock.scenario([
    { match: { model: 'claude-overloaded' }, fault: 'status=529' },
    { match: { model: 'gpt-overloaded' }, fault: 'status=503' },
    { match: { model: 'claude-short' }, fault: 'error=prompt_too_long' },
  ]);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const messages = (model, extra = {}, headers = {}) => request(gateway.port, {
  path: '/v1/messages',
  headers: { 'anthropic-version': '2023-06-01', 'x-api-key': 'client', ...headers },
  body: { model, max_tokens: 128, messages: [{ role: 'user', content: 'Hello' }], ...extra },
});
const chat = (model, extra = {}) =>
  request(gateway.port, { body: { model, messages: [{ role: 'user', content: 'Hello' }], ...extra } });
const last = async (model) => (await mock.stats()).requests.filter((r) => r.model === model).at(-1);

function sse(text) {
  const body = dechunk(text.slice(text.indexOf('\r\n\r\n') + 4));
  return body.split('\n\n').filter(Boolean).map((block) => {
    const lines = block.split('\n');
    const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
    const data = lines.find((l) => l.startsWith('data: '))?.slice(6);
    return { event, data };
  });
}

function raw(path, body, headers = '') {
  const json = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${headers}` +
    `content-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`;
}

test('Anthropic client to an Anthropic deployment: x-api-key, anthropic-version, request-id', async () => {
  const res = await messages('claude');
  assert.equal(res.status, 200, res.body);
  const body = JSON.parse(res.body);
  assert.equal(body.type, 'message');
  assert.equal(body.model, 'claude-sonnet-4-5');
  assert.match(body.content[0].text, /claude-sonnet-4-5/);
  assert.match(res.headers['x-switchyard-upstream-request-id'], /^req_/);
  const sent = await last('claude-sonnet-4-5');
  assert.equal(sent.path, '/v1/messages');
  assert.equal(sent.headers.authorization, undefined, 'the key goes in x-api-key, not Authorization');
  assert.equal(JSON.parse(sent.body).model, 'claude-sonnet-4-5');
});

test('the anthropic-ratelimit-* headers are read into the deployment\'s headroom', async () => {
  await messages('claude');
  const res = await request(gateway.port, { method: 'GET', path: '/status',
                                            headers: { 'x-api-key': KEY } });
  const d = JSON.parse(res.body).deployments.find((x) => x.name === 'claude-a');
  assert.ok(d.headroom.requests.limit > 0, JSON.stringify(d.headroom));
  const { limit, remaining } = d.headroom.input_tokens;
  assert.ok(Number.isInteger(limit) && limit > 0, `input_tokens.limit ${limit}`);
  assert.ok(Number.isInteger(remaining) && remaining >= 0 && remaining <= limit,
            `input_tokens.remaining ${remaining} of ${limit}`);
  // Exactly what the upstream itself sends for the same request.
  const direct = await request(mock.port, {
    path: '/v1/messages',
    headers: { 'anthropic-version': '2023-06-01', 'x-api-key': KEY },
    body: { model: 'claude-sonnet-4-5', max_tokens: 128,
            messages: [{ role: 'user', content: 'Hello' }] },
  });
  assert.equal(direct.status, 200, direct.body);
  assert.equal(limit, Number(direct.headers['anthropic-ratelimit-input-tokens-limit']));
  assert.equal(remaining, Number(direct.headers['anthropic-ratelimit-input-tokens-remaining']));
  assert.ok(!Number.isNaN(Date.parse(d.headroom.requests.reset)), 'RFC 3339 reset parsed');
});

test('Anthropic client to an OpenAI deployment: translated both ways', async () => {
  const res = await messages('gpt', { system: 'Be brief.' });
  assert.equal(res.status, 200, res.body);
  const body = JSON.parse(res.body);
  assert.equal(body.type, 'message');
  assert.equal(body.content[0].type, 'text');
  assert.match(body.content[0].text, /gpt-4\.1/);
  assert.equal(body.stop_reason, 'end_turn');
  assert.ok(body.usage.output_tokens > 0);
  const sent = JSON.parse((await last('gpt-4.1')).body);
  assert.deepEqual(sent.messages[0], { role: 'system', content: 'Be brief.' });
  assert.equal(sent.max_tokens, 128);
});

test('OpenAI client to an Anthropic deployment: translated both ways', async () => {
  const res = await chat('claude', { max_tokens: 64 });
  assert.equal(res.status, 200, res.body);
  const body = JSON.parse(res.body);
  assert.equal(body.object, 'chat.completion');
  assert.match(body.choices[0].message.content, /claude-sonnet-4-5/);
  assert.equal(body.choices[0].finish_reason, 'stop');
  assert.ok(body.usage.completion_tokens > 0);
  const sent = JSON.parse((await last('claude-sonnet-4-5')).body);
  assert.equal(sent.max_tokens, 64);
  assert.deepEqual(sent.messages, [{ role: 'user', content: 'Hello' }]);
});

test('streams are translated event by event, both ways', async () => {
  const oai = sse((await rawExchange(gateway.port, raw('/v1/chat/completions',
    { model: 'claude', stream: true, stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Hello' }] }))).text);
  assert.equal(oai.at(-1).data, '[DONE]');
  const chunks = oai.slice(0, -1).map((e) => JSON.parse(e.data));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.match(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), /claude-sonnet-4-5/);
  assert.ok(chunks.some((c) => c.choices[0]?.finish_reason === 'stop'));
  assert.ok(chunks.at(-1).usage.completion_tokens > 0);

  const ant = sse((await rawExchange(gateway.port, raw('/v1/messages',
    { model: 'gpt', stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] },
    'anthropic-version: 2023-06-01\r\n'))).text);
  const names = ant.map((e) => e.event);
  assert.equal(names[0], 'message_start');
  assert.equal(names.at(-1), 'message_stop');
  assert.ok(names.includes('content_block_start') && names.includes('content_block_delta'));
  for (const e of ant) assert.equal(JSON.parse(e.data).type, e.event);
  const text = ant.filter((e) => e.event === 'content_block_delta')
    .map((e) => JSON.parse(e.data).delta.text).join('');
  assert.match(text, /gpt-4\.1/);
});

test('a chain that starts on Anthropic (529) falls back to OpenAI, and the reverse', async () => {
  let res = await chat('claude-then-gpt');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'gpt');
  assert.equal(res.headers['x-switchyard-fallback-depth'], '1');
  assert.equal(JSON.parse(res.body).object, 'chat.completion');

  res = await messages('gpt-then-claude');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'claude');
  assert.equal(JSON.parse(res.body).type, 'message');
});

test('"prompt is too long" from Anthropic goes to the context-window fallback', async () => {
  const res = await messages('claude-long');
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'claude');
});

test('local errors on /v1/messages use the Anthropic envelope', async () => {
  let res = await messages('nope');
  assert.equal(res.status, 404);
  let body = JSON.parse(res.body);
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'not_found_error');
  assert.match(body.error.message, /nope/);

  res = await request(gateway.port, { path: '/v1/messages', body: '{"model":' });
  assert.equal(res.status, 400);
  body = JSON.parse(res.body);
  assert.equal(body.error.type, 'invalid_request_error');
});

test('a feature that cannot be translated is a clear 400 naming it', async () => {
  const res = await chat('claude', { n: 3 });
  assert.equal(res.status, 400, res.body);
  assert.match(JSON.parse(res.body).error.message, /\bn\b/);
});

test('an upstream error passes through in the client\'s format', async () => {
  await mock.scenario([{ match: { model: 'gpt-4.1' }, fault: 'status=401', times: 1 }]);
  const res = await messages('gpt');
  assert.equal(res.status, 401);
  const body = JSON.parse(res.body);
  assert.equal(body.type, 'error');
  assert.equal(body.error.type, 'authentication_error');
  await mock.scenario([
    { match: { model: 'claude-overloaded' }, fault: 'status=529' },
    { match: { model: 'gpt-overloaded' }, fault: 'status=503' },
    { match: { model: 'claude-short' }, fault: 'error=prompt_too_long' },
  ]);
});

test('an Anthropic `event: error` before any text is retried; after text it reaches the client', async () => {
  await mock.scenario([{ match: { model: 'claude-sonnet-4-5' }, fault: 'error_after_chunks=0', times: 1 }]);
  let events = sse((await rawExchange(gateway.port, raw('/v1/messages',
    { model: 'claude', stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
    'anthropic-version: 2023-06-01\r\n'))).text);
  assert.equal(events.at(-1).event, 'message_stop');
  assert.ok(!events.some((e) => e.event === 'error'));
  assert.equal(events.filter((e) => e.event === 'message_start').length, 1, 'one clean stream');

  await mock.scenario([{ match: { model: 'claude-sonnet-4-5' }, fault: 'chunks=4;error_after_chunks=2', times: 1 }]);
  events = sse((await rawExchange(gateway.port, raw('/v1/chat/completions',
    { model: 'claude', stream: true, messages: [{ role: 'user', content: 'Hi' }] }))).text);
  const last = JSON.parse(events.at(-1).data);
  assert.equal(last.error.code, 'stream_interrupted', 'an OpenAI error chunk');
  assert.match(last.error.message, /: Overloaded$/, "Anthropic's message inside");
  await mock.scenario([
    { match: { model: 'claude-overloaded' }, fault: 'status=529' },
    { match: { model: 'gpt-overloaded' }, fault: 'status=503' },
    { match: { model: 'claude-short' }, fault: 'error=prompt_too_long' },
  ]);
});
