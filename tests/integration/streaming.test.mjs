// SSE pass-through: every event arrives in order and as soon as the upstream sent it; failures
// after the commit point end the stream with an error event, never a silent truncation.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMock, startGateway, rawExchange, dechunk, group, metricValue, request, eventually }
  from './harness.mjs';

let mock;
let gateway;

before(async () => {
  mock = await startMock();
  await mock.scenario([
    { match: { model: 'slow-stream' }, fault: 'chunks=6;delay_chunks_ms=150' },
    { match: { model: 'error-stream' }, fault: 'chunks=5;error_after_chunks=2;error=server_overloaded' },
    { match: { model: 'reset-stream' }, fault: 'chunks=5;reset_after_chunks=2' },
    { match: { model: 'refused-stream' }, fault: 'status=503' },
  ]);
  gateway = await startGateway(`
retry: {base_ms: 10, cap_ms: 50}
models:
${group('stream', mock.port, 'plain-stream')}${group('slow', mock.port, 'slow-stream')}${group('erroring', mock.port, 'error-stream')}${group('resetting', mock.port, 'reset-stream')}${group('refused', mock.port, 'refused-stream')}`);
});

after(async () => {
  await gateway?.stop();
  await mock?.stop();
});

function streamRequest(model, extra = {}) {
  const body = JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }],
                                ...extra });
  return `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

// Splits a raw HTTP response into status, headers and the de-chunked SSE events.
function parseStream(text) {
  const end = text.indexOf('\r\n\r\n');
  const head = text.slice(0, end);
  const status = Number(head.match(/^HTTP\/1\.1 (\d+)/)[1]);
  const headers = Object.fromEntries(head.split('\r\n').slice(1).map((l) => {
    const i = l.indexOf(':');
    return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
  }));
  const body = dechunk(text.slice(end + 4));
  assert.ok(body.endsWith('\n\n'), 'the stream ends on an event boundary');
  const events = body.split('\n\n').filter(Boolean).map((e) => {
    assert.match(e, /^data: /, `event ${JSON.stringify(e)}`);
    return e.slice(6);
  });
  return { status, headers, events };
}

test('a stream arrives whole and in order, [DONE] last, usage before it', async () => {
  const { text } = await rawExchange(gateway.port,
    streamRequest('stream', { stream_options: { include_usage: true } }));
  const { status, headers, events } = parseStream(text);
  assert.equal(status, 200);
  assert.match(headers['content-type'], /^text\/event-stream/);
  assert.equal(headers['transfer-encoding'], 'chunked');
  assert.equal(headers['x-switchyard-deployment'], 'plain-stream@127.0.0.1:' + mock.port);
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const usage = chunks.at(-1);
  assert.deepEqual(usage.choices, []);
  assert.ok(usage.usage.completion_tokens > 0);
  const finish = chunks.at(-2);
  assert.equal(finish.choices[0].finish_reason, 'stop');
  const content = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  assert.match(content, /plain-stream/);
});

test('events are forwarded as they arrive, not buffered until the upstream finishes', async () => {
  const { pieces, text } = await rawExchange(gateway.port, streamRequest('slow'));
  const { status, events } = parseStream(text);
  assert.equal(status, 200);
  const words = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]?.delta?.content)
    .filter((c) => c && c.trim());
  assert.equal(words.length, 6);
  assert.equal(events.at(-1), '[DONE]');
  // The mock waits 150 ms between events: the client must see them spread out over time.
  const firstEvent = pieces.find((p) => p.data.includes('data: '));
  const last = pieces.at(-1);
  assert.ok(last.at - firstEvent.at >= 600,
            `first event at ${firstEvent.at} ms, last bytes at ${last.at} ms`);
  assert.ok(pieces.length >= 6, `${pieces.length} separate arrivals`);
});

test('an error event after the 200 reaches the client and the stream ends cleanly', async () => {
  const { text } = await rawExchange(gateway.port, streamRequest('erroring'));
  const { status, events } = parseStream(text);
  assert.equal(status, 200);
  const last = JSON.parse(events.at(-1));
  // Switchyard's own stream_interrupted event, the upstream's message inside (not its JSON).
  assert.equal(last.error.code, 'stream_interrupted');
  assert.equal(last.error.type, 'upstream_error');
  assert.match(last.error.message, /: Our servers are currently overloaded\. Please try again later\.$/);
  assert.ok(!events.includes('[DONE]'));
  const words = events.slice(0, -1).map((e) => JSON.parse(e).choices[0]?.delta?.content)
    .filter((c) => c && c.trim());
  assert.equal(words.length, 2);
});

test('a reset after the commit point becomes an error event, not a silent truncation', async () => {
  const { text } = await rawExchange(gateway.port, streamRequest('resetting'));
  const { status, events } = parseStream(text);
  assert.equal(status, 200);
  const last = JSON.parse(events.at(-1));
  assert.equal(last.error.type, 'upstream_error');
  assert.equal(last.error.code, 'stream_interrupted');
  assert.ok(!events.includes('[DONE]'));
});

test('a stream request refused before the stream is retried, then answered as JSON', async () => {
  const res = await request(gateway.port, { body: { model: 'refused', stream: true, messages: [] } });
  assert.equal(res.status, 503);
  assert.match(res.headers['content-type'], /^application\/json/);
  const error = JSON.parse(res.body).error;
  assert.equal(error.code, 'all_attempts_failed');
  assert.ok(error.attempts.length >= 2, 'nothing was committed, so it was retried');
});

test('the gateway is healthy afterwards: nothing in flight, still serving', async () => {
  // The last request's bookkeeping ends just after its answer did.
  const text = await eventually(async () => {
    const scrape = await gateway.metrics();
    return metricValue(scrape, 'switchyard_in_flight_requests') === 1 && scrape;
  }, { what: 'the scrape alone in flight' });
  assert.equal(metricValue(text, 'switchyard_in_flight_requests'), 1, 'only the scrape itself');
  const { events } = parseStream((await rawExchange(gateway.port, streamRequest('stream'))).text);
  assert.equal(events.at(-1), '[DONE]');
  await eventually(() => gateway.logs.some((l) => l.model_group === 'resetting'),
                   { what: 'the access-log line of the interrupted stream' });
  const interrupted = gateway.logs.filter((l) => l.model_group === 'resetting');
  assert.equal(interrupted.length, 1);
  assert.match(interrupted[0].error, /resetting|reset-stream|failed/);
});
