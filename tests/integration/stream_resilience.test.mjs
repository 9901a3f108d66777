// Streams are as safe as non-streaming calls: a failure before the commit point (the first content
// event) is retried without the client noticing; after it, interactive clients get what arrived
// plus an error event, background clients get one complete stream. The downstream client is a raw
// socket reader checking every byte.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startMock, startGateway, rawExchange, dechunk, metricValue, eventually,
} from './harness.mjs';

let mock;
let gateway;

before(async () => {
  mock = await startMock();
  const p = mock.port;
  const group = (name) => `  - name: ${name}
    deployments: [{name: ${name}, model: ${name}, api_base: "http://127.0.0.1:${p}/v1"}]
`;
  gateway = await startGateway(`
retry: {base_ms: 10, cap_ms: 50}
timeouts: {first_token_ms: 400, chunk_ms: 400}
models:
${['error-first', 'error-late', 'reset-first', 'reset-late', 'stall-first', 'stall-late', 'trickle',
   'bg-error', 'bg-reset', 'bare-first', 'bare-late'].map(group).join('')}`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

async function rule(model, fault, times) {
  await mock.scenario([{ match: { model }, fault, ...(times ? { times } : {}) }]);
}

function streamRequest(model, headers = {}) {
  const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
    `${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

// Status, headers and the SSE events of a raw chunked response.
function parse(text) {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end);
  const status = Number(head.match(/^HTTP\/1\.1 (\d+)/)[1]);
  const headers = Object.fromEntries(head.split('\r\n').slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
  }));
  const body = dechunk(text.slice(end + 4));
  const events = body.split('\n\n').filter(Boolean).map((e) => e.replace(/^data: /, ''));
  const words = events.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e))
    .map((c) => c.choices?.[0]?.delta?.content).filter((c) => c && c.trim());
  return { status, headers, body, events, words };
}

const attempts = async (model) => (await mock.stats()).requests.filter((r) => r.model === model);

function assertComplete(r, words) {
  assert.equal(r.status, 200);
  assert.equal(r.words.length, words);
  assert.equal(r.events.at(-1), '[DONE]');
  assert.ok(!r.body.includes('"error"'), 'no error reached the client');
}

test('an error event before any content is retried; the client sees one clean stream', async () => {
  await rule('error-first', 'chunks=3;error_after_chunks=0;error=server_overloaded', 1);
  const r = parse((await rawExchange(gateway.port, streamRequest('error-first'))).text);
  assertComplete(r, 4);  // the retry has no fault: the mock's default reply, four words
  assert.equal(r.headers['x-switchyard-attempts'], '2');
  assert.equal((await attempts('error-first')).length, 2);
});

test('a reset before any content is retried transparently', async () => {
  await rule('reset-first', 'chunks=3;reset_after_chunks=0', 1);
  const r = parse((await rawExchange(gateway.port, streamRequest('reset-first'))).text);
  assertComplete(r, 4);
  assert.equal((await attempts('reset-first')).length, 2);
});

test('a stall before the first token times out (first_token_ms) and is retried', async () => {
  await rule('stall-first', 'chunks=3;stall_after_chunks=0', 1);
  const started = Date.now();
  const r = parse((await rawExchange(gateway.port, streamRequest('stall-first'))).text);
  assertComplete(r, 4);
  const took = Date.now() - started;
  assert.ok(took >= 380 && took < 3000, `answered after ${took} ms (first_token_ms 400)`);
  assert.equal((await attempts('stall-first')).length, 2);
});

test('interactive: an error event after content reaches the client, no retry', async () => {
  await rule('error-late', 'chunks=5;error_after_chunks=2;error=server_overloaded');
  const r = parse((await rawExchange(gateway.port, streamRequest('error-late'))).text);
  assert.equal(r.status, 200);
  assert.equal(r.words.length, 2);
  const error = JSON.parse(r.events.at(-1)).error;
  assert.equal(error.code, 'stream_interrupted');
  assert.match(error.message, /Our servers are currently overloaded/);
  assert.ok(!error.message.includes('{'), 'the message, not the raw JSON');
  assert.equal((await attempts('error-late')).length, 1);
});

test('an error event without data is an error all the same: retried before content, reported after', async () => {
  await rule('bare-first', 'chunks=3;error_after_chunks=0;error_without_data=1', 1);
  const first = parse((await rawExchange(gateway.port, streamRequest('bare-first'))).text);
  assertComplete(first, 4);
  assert.equal(first.headers['x-switchyard-attempts'], '2');
  assert.equal((await attempts('bare-first')).length, 2);

  await rule('bare-late', 'chunks=5;error_after_chunks=2;error_without_data=1');
  const late = parse((await rawExchange(gateway.port, streamRequest('bare-late'))).text);
  assert.equal(late.status, 200);
  assert.equal(late.words.length, 2);
  assert.ok(!late.body.includes('[DONE]'), 'never passed for a complete stream');
  assert.equal(JSON.parse(late.events.at(-1)).error.code, 'stream_interrupted');
  assert.equal((await attempts('bare-late')).length, 1);
});

test('interactive: a reset after content ends with an error event', async () => {
  await rule('reset-late', 'chunks=5;reset_after_chunks=2');
  const r = parse((await rawExchange(gateway.port, streamRequest('reset-late'))).text);
  assert.equal(r.words.length, 2);
  assert.equal(JSON.parse(r.events.at(-1)).error.code, 'stream_interrupted');
  assert.equal((await attempts('reset-late')).length, 1);
});

test('interactive: a stall after content hits the chunk timeout and ends with an error event', async () => {
  await rule('stall-late', 'chunks=5;stall_after_chunks=2');
  const started = Date.now();
  const { text, pieces } = await rawExchange(gateway.port, streamRequest('stall-late'));
  const r = parse(text);
  assert.equal(r.words.length, 2);
  const error = JSON.parse(r.events.at(-1)).error;
  assert.equal(error.code, 'stream_interrupted');
  assert.match(error.message, /timed out/);
  const gap = pieces.at(-1).at - pieces[0].at;
  assert.ok(gap >= 380 && Date.now() - started < 3000, `error after a ${gap} ms gap (chunk_ms 400)`);
});

test('a slow trickle that stays under the chunk timeout completes', async () => {
  await rule('trickle', 'chunks=5;delay_chunks_ms=250');
  const r = parse((await rawExchange(gateway.port, streamRequest('trickle'))).text);
  assertComplete(r, 5);
});

test('a per-request chunk timeout (x-switchyard-timeout-chunk-ms) overrides the config', async () => {
  await rule('trickle', 'chunks=3;delay_chunks_ms=250');
  const { text } = await rawExchange(gateway.port,
    streamRequest('trickle', { 'x-switchyard-timeout-chunk-ms': '100' }));
  // 250 ms between events with a 100 ms budget: the first token never comes in time, on every
  // attempt, and nothing was committed, so the client gets an honest JSON error.
  assert.match(text, /^HTTP\/1\.1 504 /);
  const error = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error;
  assert.equal(error.code, 'upstream_timeout');
  assert.ok(error.attempts.length >= 2);
});

test('background: a mid-stream error is retried whole; the client sees one complete stream', async () => {
  await rule('bg-error', 'chunks=4;error_after_chunks=2;error=server_error', 1);
  const r = parse((await rawExchange(gateway.port,
    streamRequest('bg-error', { 'x-switchyard-stream-mode': 'background' }))).text);
  assertComplete(r, 4);
  assert.equal((await attempts('bg-error')).length, 2);
});

test('background: a mid-stream reset is retried whole', async () => {
  await rule('bg-reset', 'chunks=4;reset_after_chunks=3', 1);
  const r = parse((await rawExchange(gateway.port,
    streamRequest('bg-reset', { 'x-switchyard-stream-mode': 'background' }))).text);
  assertComplete(r, 4);
  assert.equal((await attempts('bg-reset')).length, 2);
});

test('the gateway is healthy afterwards: nothing in flight, nothing leaked', async () => {
  await mock.scenario([]);
  // The last streams' bookkeeping ends just after their answers did.
  const text = await eventually(async () => {
    const scrape = await gateway.metrics();
    return metricValue(scrape, 'switchyard_in_flight_requests') === 1 &&
      metricValue(scrape, 'switchyard_downstream_connections') === 1 && scrape;
  }, { what: 'the scrape alone in flight and connected' });
  assert.equal(metricValue(text, 'switchyard_in_flight_requests'), 1, 'only the scrape itself');
  assert.equal(metricValue(text, 'switchyard_downstream_connections'), 1, 'only the scrape itself');
  const r = parse((await rawExchange(gateway.port, streamRequest('trickle'))).text);
  assertComplete(r, r.words.length);
});

test('a long non-streaming request is streamed upstream and answered as one JSON body', async () => {
  await rule('trickle', 'chunks=6;reset_after_chunks=3', 1);  // the first try breaks midway
  const res = await fetch(`${gateway.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'trickle', max_tokens: 30000, messages: [{ role: 'user', content: 'hi' }] }),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^application\/json/);
  const body = await res.json();
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.choices[0].message.role, 'assistant');
  assert.match(body.choices[0].message.content, /^Mock reply from trickle\.$/);
  assert.equal(body.choices[0].finish_reason, 'stop');
  assert.ok(body.usage.completion_tokens > 0);
  const sent = (await attempts('trickle')).slice(-2).map((r) => JSON.parse(r.body));
  assert.equal(sent.length, 2, 'the broken stream was retried whole');
  for (const s of sent) {
    assert.equal(s.stream, true);
    assert.deepEqual(s.stream_options, { include_usage: true });
  }
});
