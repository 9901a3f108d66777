// POST /v1/responses through the same engine as chat: retries and fallbacks across deployments
// that speak the Responses API and ones reached by translation; the commit point and the
// Responses stream's own error event; what cannot cross is a 400 only when it would have to.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, request, rawExchange, dechunk, eventually } from './harness.mjs';

let mock;
let gateway;

before(async () => {
  mock = await startMock();
  const base = `http://127.0.0.1:${mock.port}/v1`;
  gateway = await startGateway(`
retry: {base_ms: 5, cap_ms: 20}
models:
  - name: primary
    deployments: [{model: native-down, api_base: "${base}", responses_api: true}]
    fallbacks: [translated]
  - name: translated
    deployments: [{model: chat-model, api_base: "${base}"}]
  - name: native
    deployments: [{model: native-model, api_base: "${base}", responses_api: true}]
  - name: claude
    deployments: [{provider: anthropic, model: claude-model, api_base: "${base}", api_key: k}]
`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

const respond = (body, headers = {}) => request(gateway.port, { path: '/v1/responses', body, headers });

function streamRequest(body) {
  const payload = JSON.stringify({ stream: true, ...body });
  return `POST /v1/responses HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n${payload}`;
}

// The SSE events of a raw chunked response: [{event, data}].
function events(text) {
  const end = text.indexOf('\r\n\r\n');
  assert.match(text.slice(0, end), /^HTTP\/1\.1 200 /);
  return dechunk(text.slice(end + 4)).split('\n\n').filter(Boolean).map((block) => {
    const lines = block.split('\n');
    return { event: lines.find((l) => l.startsWith('event: '))?.slice(7),
             data: JSON.parse(lines.find((l) => l.startsWith('data: ')).slice(6)) };
  });
}

const text = (list) => list.filter((e) => e.event === 'response.output_text.delta')
  .map((e) => e.data.delta).join('');

test('a failing Responses deployment falls back to a chat deployment, answer translated', async () => {
  await mock.scenario([{ match: { model: 'native-down' }, fault: 'status=503' }]);
  const res = await respond({ model: 'primary', input: 'Hello', instructions: 'Be brief.' });
  assert.equal(res.status, 200, res.body);
  assert.equal(res.headers['x-switchyard-model-group'], 'translated');
  const body = JSON.parse(res.body);
  assert.equal(body.object, 'response');
  assert.equal(body.instructions, 'Be brief.');
  assert.equal(body.output[0].content[0].text, 'Mock reply from chat-model.');
  const sent = (await mock.stats()).requests.filter((r) => r.model === 'chat-model').at(-1);
  assert.equal(sent.path, '/v1/chat/completions');
  assert.deepEqual(JSON.parse(sent.body).messages[0], { role: 'system', content: 'Be brief.' });
  await eventually(() => gateway.logs.some((l) => l.route === 'responses'),
                   { what: 'the access-log line of the request' });
  assert.equal(gateway.logs.filter((l) => l.route === 'responses').at(-1).model_group, 'translated');
});

test('an error event before the first delta is retried: one clean stream', async () => {
  await mock.scenario([{ match: { model: 'native-model' }, fault: 'chunks=3;error_after_chunks=0', times: 1 }]);
  const list = events((await rawExchange(gateway.port, streamRequest({ model: 'native', input: 'Hi' }))).text);
  assert.equal(list.at(-1).event, 'response.completed');
  assert.ok(!list.some((e) => e.event === 'error'));
  assert.equal(list.filter((e) => e.event === 'response.created').length, 1);
  assert.equal(text(list), 'Mock reply from native-model.');
});

test('after the first delta a failure ends the stream with the Responses error event', async () => {
  for (const [model, fault] of [['native', 'chunks=5;error_after_chunks=2'],
                                ['native', 'chunks=5;end_after_chunks=2'],
                                ['translated', 'chunks=5;error_after_chunks=2'],
                                ['claude', 'chunks=5;reset_after_chunks=2']]) {
    const upstream = { native: 'native-model', translated: 'chat-model', claude: 'claude-model' }[model];
    await mock.scenario([{ match: { model: upstream }, fault }]);
    const list = events((await rawExchange(gateway.port, streamRequest({ model, input: 'Hi' }))).text);
    assert.equal(text(list), 'word1 word2', `${model} ${fault}`);
    const last = list.at(-1);
    assert.equal(last.event, 'error', `${model} ${fault}`);
    assert.equal(last.data.type, 'error');
    assert.equal(last.data.code, 'stream_interrupted');
    assert.ok(!last.data.message.startsWith('{'), last.data.message);
  }
  await mock.scenario([]);
});

test('what cannot cross is refused only when the chain must cross', async () => {
  const stored = await respond({ model: 'native', input: 'Hi', store: true });
  assert.equal(stored.status, 200, 'a Responses deployment takes it as sent');
  for (const [body, param] of [
    [{ model: 'translated', input: 'Hi', store: true }, 'store'],
    [{ model: 'translated', input: 'Hi', previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ model: 'claude', input: 'Hi', tools: [{ type: 'web_search' }] }, 'tools[0].type'],
    [{ model: 'translated', input: 'Hi', background: true }, 'background'],
  ]) {
    const res = await respond(body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(JSON.parse(res.body).error.param, param);
  }
  const missing = await respond({ model: 'native' });
  assert.equal(missing.status, 400);
  assert.equal(JSON.parse(missing.body).error.param, 'input');
});

test('function calls and their outputs cross both ways', async () => {
  const res = await respond({
    model: 'translated',
    input: [
      { role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
    ],
    tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }],
  });
  assert.equal(res.status, 200, res.body);
  const sent = JSON.parse((await mock.stats()).requests.filter((r) => r.model === 'chat-model').at(-1).body);
  assert.deepEqual(sent.messages.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.equal(sent.messages[1].tool_calls[0].function.name, 'get_weather');
  assert.equal(sent.messages[2].tool_call_id, 'call_1');
  assert.equal(sent.tools[0].function.name, 'get_weather');
});
