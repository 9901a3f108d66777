// Soak: the mock's whole fault catalogue mixed with healthy traffic, many concurrent clients on
// both APIs, streaming and not, for a bounded time. Every request is accounted for on the client
// side, in the gateway's access log and at the mock; the gateway's memory, descriptors and
// in-flight gauge are compared at start and end.
//
//   node bench/soak.mjs [--seconds 60] [--clients 120] [--json FILE]    (bench/soak.sh builds first)
//
// Needs SWITCHYARD_BIN and SWITCHYARD_MOCK_BIN. Exits 1 when a request was lost or answered more
// than once, or the gateway did not come back to idle.

import http from 'node:http';
import { createReadStream, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { startMock, startGateway, metricValue, sleep, tempDir } from '../tests/integration/harness.mjs';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) => {
  if (a.startsWith('--')) pairs.push([a.slice(2), all[i + 1]]);
  return pairs;
}, []));
const SECONDS = Number(args.seconds ?? 60);
const CLIENTS = Number(args.clients ?? 120);

// Each upstream model misbehaves in its own way, some of the time.
const FAULTS = {
  'ok-1': '',
  'ok-2': 'delay_headers_ms=20',
  'rate-limited': 'status=429;retry_after=0.2;probability=0.3',
  'server-error': 'status=500;probability=0.2',
  'overloaded': 'status=529;probability=0.2',
  'unavailable': 'status=503;retry_after=1;probability=0.1',
  'resets': 'reset=1;probability=0.1',
  'hangs': 'stall=1;probability=0.02',
  'slow-headers': 'delay_headers_ms=400;probability=0.3',
  'truncated': 'truncate_body=50;probability=0.1',
  'trickle': 'chunks=8;delay_chunks_ms=30',
  'stream-error': 'chunks=6;error_after_chunks=3;probability=0.15',
  'stream-reset': 'chunks=6;reset_after_chunks=2;probability=0.1',
  'stream-stall': 'chunks=6;stall_after_chunks=3;probability=0.03',
  'stream-no-end': 'chunks=6;end_after_chunks=4;probability=0.1',
  'stream-first': 'chunks=6;error_after_chunks=0;probability=0.2',
};

// Model groups: faulty deployments in front, healthy fallbacks behind.
const GROUPS = {
  calm: ['ok-1', 'ok-2'],
  limited: ['rate-limited', 'unavailable'],
  failing: ['server-error', 'overloaded'],
  broken: ['resets', 'hangs', 'truncated'],
  slow: ['slow-headers', 'trickle'],
  streams: ['stream-error', 'stream-reset', 'stream-stall', 'stream-no-end', 'stream-first'],
};

function config(port, accessLog) {
  const deployment = (model) => `{name: ${model}, model: ${model}, api_base: "http://127.0.0.1:${port}/v1"}`;
  const groups = Object.entries(GROUPS).map(([name, models]) => `  - name: ${name}
    deployments: [${models.map(deployment).join(', ')}]
    fallbacks: [${name === 'calm' ? '' : 'calm'}]
`).join('');
  return `server: {max_body_bytes: 1048576}
retry: {base_ms: 20, cap_ms: 400, deadline_ms: 8000}
health: {allowed_fails: 5, window_ms: 10000, cooldown_ms: 2000}
timeouts: {connect_ms: 1000, first_byte_ms: 2000, first_token_ms: 1500, chunk_ms: 1000, total_ms: 8000}
log: {access: "${accessLog}"}
models:
${groups}`;
}

function processStats(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(status.match(/VmRSS:\s+(\d+)/)[1]) / 1024;
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  return { rssMiB: rss, fds };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS * 2 });

// One request; resolves to how it ended, on the client side.
function send(port, { api, stream, group }) {
  const openai = api === 'openai';
  const body = JSON.stringify(openai
    ? { model: group, stream, messages: [{ role: 'user', content: 'Hello there' }] }
    : { model: group, stream, max_tokens: 64, messages: [{ role: 'user', content: 'Hello there' }] });
  return new Promise((resolve) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', agent,
      path: openai ? '/v1/chat/completions' : '/v1/messages',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      timeout: 30000,
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve(classify(res.statusCode, res.headers, text, { openai, stream })));
      res.on('error', () => resolve({ outcome: 'lost', cause: 'response aborted' }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (e) => resolve({ outcome: 'lost', cause: e.message }));
    req.end(body);
  });
}

// What the client got: a complete answer, an honest error (status or error event), or garbage.
function classify(status, headers, text, { openai, stream }) {
  if (status !== 200) {
    try {
      JSON.parse(text);
      return { outcome: 'error', cause: `HTTP ${status}` };
    } catch {
      return { outcome: 'corrupt', cause: `HTTP ${status} without a JSON body` };
    }
  }
  if (!headers['content-type']?.startsWith('text/event-stream')) {
    try {
      const answer = JSON.parse(text);
      const ok = openai ? answer.object === 'chat.completion' : answer.type === 'message';
      return ok ? { outcome: 'answered' } : { outcome: 'corrupt', cause: 'unexpected JSON' };
    } catch {
      return { outcome: 'corrupt', cause: '200 with invalid JSON' };
    }
  }
  const events = text.split('\n\n').filter(Boolean);
  const last = events.at(-1) ?? '';
  if (openai ? last === 'data: [DONE]' : last.includes('"message_stop"')) return { outcome: 'answered' };
  if (/stream_interrupted/.test(last)) return { outcome: 'error', cause: 'stream_interrupted after the commit point' };
  return { outcome: 'corrupt', cause: 'stream ended without its end event or an error event' };
}

async function main() {
  const mock = await startMock(['--threads', '2', '--seed', '7']);
  await mock.scenario(Object.entries(FAULTS).filter(([, fault]) => fault)
    .map(([model, fault]) => ({ match: { model }, fault })));
  // The access log goes to a file and is counted at the end (millions of lines in a long run).
  const accessLog = path.join(tempDir(), 'access.log');
  const gateway = await startGateway(config(mock.port, accessLog), { workers: 0 });
  const pid = gateway.child.pid;
  await sleep(200);
  const start = processStats(pid);

  const outcomes = new Map();
  const causes = new Map();
  let sent = 0;
  const until = Date.now() + SECONDS * 1000;
  const groups = Object.keys(GROUPS);
  let seed = 1;
  const random = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
  async function client() {
    while (Date.now() < until) {
      const group = groups[Math.floor(random() * groups.length)];
      const api = random() < 0.5 ? 'openai' : 'anthropic';
      const stream = group === 'streams' || group === 'slow' ? random() < 0.8 : random() < 0.4;
      sent += 1;
      const r = await send(gateway.port, { api, stream, group });
      outcomes.set(r.outcome, (outcomes.get(r.outcome) ?? 0) + 1);
      if (r.cause) causes.set(r.cause, (causes.get(r.cause) ?? 0) + 1);
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, client));
  agent.destroy();
  await sleep(500);
  const metrics = await gateway.metrics();
  const end = processStats(pid);
  const inFlight = metricValue(metrics, 'switchyard_in_flight_requests');
  const upstream = (await mock.stats()).total;
  await gateway.stop();  // flushes the access log
  await mock.stop();
  let logged = 0;
  let unparsable = 0;
  for await (const line of readline.createInterface({ input: createReadStream(accessLog) })) {
    try {
      const record = JSON.parse(line);
      if (record.route === 'chat' || record.route === 'messages') logged += 1;
    } catch {
      unparsable += 1;
    }
  }

  const answered = sent - (outcomes.get('lost') ?? 0);
  const result = {
    seconds: SECONDS, clients: CLIENTS, sent, answered_exactly_once: logged === sent ? answered : null,
    logged, unparsable_log_lines: unparsable, lost: outcomes.get('lost') ?? 0, corrupt: outcomes.get('corrupt') ?? 0,
    complete_answers: outcomes.get('answered') ?? 0, honest_errors: outcomes.get('error') ?? 0,
    causes: Object.fromEntries([...causes].sort((a, b) => b[1] - a[1])),
    upstream_calls_per_request: upstream / sent,
    rss_mib: { start: start.rssMiB, end: end.rssMiB }, fds: { start: start.fds, end: end.fds },
    in_flight_at_end: inFlight - 1,  // the scrape itself is in flight
  };
  if (args.json) writeFileSync(args.json, JSON.stringify(result, null, 2));
  const row = (k, v) => console.log(`| ${k} | ${v} |`);
  console.log('| soak | |\n|---|---|');
  row('duration, clients', `${SECONDS} s, ${CLIENTS}`);
  row('requests sent', sent);
  row('answered exactly once (client answer and one access-log line each)', `${answered} (log lines: ${logged})`);
  row('lost', result.lost);
  row('corrupt (200 with a broken body, stream without end or error event)', result.corrupt);
  row('complete answers', result.complete_answers);
  row('honest errors', `${result.honest_errors}: ${Object.entries(result.causes).map(([c, n]) => `${c} ${n}`).join(', ')}`);
  row('upstream calls per request', result.upstream_calls_per_request.toFixed(2));
  row('RSS MiB start → end', `${start.rssMiB.toFixed(1)} → ${end.rssMiB.toFixed(1)}`);
  row('open fds start → end', `${start.fds} → ${end.fds}`);
  row('in flight at the end', result.in_flight_at_end);
  row('access-log lines that are not JSON', unparsable);
  const clean = result.lost === 0 && result.corrupt === 0 && logged === sent &&
    result.in_flight_at_end === 0 && unparsable === 0;
  process.exit(clean ? 0 : 1);
}

await main();
