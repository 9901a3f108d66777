// Test harness: starts the real switchyard and switchyard-mock binaries on free loopback ports
// (port 0; each prints the port it bound) and talks to them over real sockets.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import http from 'node:http';

export const GATEWAY_BIN = process.env.SWITCHYARD_BIN;
export const MOCK_BIN = process.env.SWITCHYARD_MOCK_BIN;
if (!GATEWAY_BIN || !MOCK_BIN) {
  throw new Error('SWITCHYARD_BIN and SWITCHYARD_MOCK_BIN must name the built binaries');
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `probe` (sync or async) every `intervalMs` until it returns something truthy, and
// resolves to that; throws naming `what` after `timeoutMs`. Tests wait for the state they need,
// not for a fixed time that is too short under load and too long otherwise.
export async function eventually(probe, { what = 'the awaited state', timeoutMs = 10000,
                                          intervalMs = 10 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

function waitForLine(child, stream, regex, what, timeoutMs = 15000) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      reject(new Error(`${what} did not start within ${timeoutMs} ms; output: ${seen}`));
    }, timeoutMs);
    const onData = (data) => {
      seen += data.toString();
      const m = seen.match(regex);
      if (m) {
        clearTimeout(timer);
        stream.off('data', onData);
        resolve(m);
      }
    };
    stream.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before it listened; output: ${seen}`));
    });
  });
}

function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export function tempDir() {
  return mkdtempSync(path.join(tmpdir(), 'switchyard-test-'));
}

// Starts switchyard-mock. Returns helpers for its /mock endpoints.
export async function startMock(args = []) {
  const child = spawn(MOCK_BIN, ['--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d.toString()));
  const m = await waitForLine(child, child.stdout, /listening on [\d.]+:(\d+)/, 'switchyard-mock');
  const port = Number(m[1]);
  const base = `http://127.0.0.1:${port}`;
  return {
    child,
    port,
    base,
    stderr: () => stderr,
    async stats() {
      const r = await fetch(`${base}/mock/stats`);
      return r.json();
    },
    async reset() {
      await fetch(`${base}/mock/reset`, { method: 'POST' });
    },
    async scenario(rules) {
      const r = await fetch(`${base}/mock/scenario`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules }),
      });
      if (r.status !== 200) throw new Error(`scenario rejected: ${await r.text()}`);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

// Starts switchyard with `yaml` as its config. Access log lines (stdout) are collected in `logs`.
// `seed`: the gateway's random draws (jitter, sampling, spread) repeat from run to run.
// `dataDir`: where its durable state store lives (default: a directory of its own); a gateway
// started again on the same one finds what the last one stored.
export async function startGateway(yaml, { env = {}, workers = 2, seed, dataDir } = {}) {
  const dir = tempDir();
  const data = dataDir ?? dir;
  const file = path.join(dir, 'switchyard.yaml');
  writeFileSync(file, yaml);
  const args = ['serve', '--config', file, '--listen', '127.0.0.1:0', '--workers', String(workers)];
  if (seed !== undefined) args.push('--seed', String(seed));
  const child = spawn(
    GATEWAY_BIN,
    args,
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SWITCHYARD_DATA_DIR: data, ...env } },
  );
  const logs = [];
  let partial = '';
  child.stdout.on('data', (d) => {
    partial += d.toString();
    const lines = partial.split('\n');
    partial = lines.pop();
    for (const line of lines) if (line) logs.push(JSON.parse(line));
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d.toString()));
  const m = await waitForLine(child, child.stderr, /listening on [\d.]+:(\d+)/, 'switchyard');
  const port = Number(m[1]);
  return {
    child,
    port,
    file,  // the config file it serves (a reload reads it again)
    dataDir: data,  // where its durable state store is
    base: `http://127.0.0.1:${port}`,
    logs,
    stderr: () => stderr,
    exited: () => exited(child),
    // With client keys configured, /metrics needs the master key: pass it as `key`.
    async metrics(key) {
      const r = await fetch(`http://127.0.0.1:${port}/metrics`,
                            key ? { headers: { authorization: `Bearer ${key}` } } : {});
      if (r.status !== 200) throw new Error(`/metrics answered ${r.status}: ${await r.text()}`);
      return r.text();
    },
    // SIGINT: stop at once (SIGTERM would keep the listener open for server.drain_delay_ms, which
    // drain.test.mjs tests on purpose).
    async stop() {
      child.kill('SIGINT');
      return exited(child);
    },
  };
}

// One metric's value from Prometheus text, or undefined.
export function metricValue(text, nameWithLabels) {
  for (const line of text.split('\n')) {
    if (line.startsWith(nameWithLabels + ' ')) return Number(line.slice(nameWithLabels.length + 1));
  }
  return undefined;
}

// A test CA (ca.pem) and a certificate for `localhost` signed by it (server.pem, server.key), in
// `dir`.
export function makeCertificates(dir) {
  const run = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=Switchyard Test CA',
      '-keyout', 'ca.key', '-out', 'ca.pem');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', 'server.key',
      '-out', 'server.csr');
  writeFileSync(path.join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost\n');
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
      '-days', '2', '-extfile', 'ext.cnf', '-out', 'server.pem');
}

// Starts a real redis-server on a free loopback port, without persistence. `restart()` starts it
// again on the same port after `kill()` (a Redis outage and its end). With `tls` ({cert, key}: PEM
// files) the port speaks TLS only.
export async function startRedis(extraArgs = [], { tls } = {}) {
  const port = await closedPort();
  const dir = tempDir();
  let child;
  const listen = tls
    ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.cert,
       '--tls-key-file', tls.key, '--tls-auth-clients', 'no']
    : ['--port', String(port)];
  const launch = async () => {
    child = spawn('redis-server', [...listen, '--bind', '127.0.0.1', '--save', '',
                                   '--appendonly', 'no', '--dir', dir, '--protected-mode', 'no',
                                   ...extraArgs],
                  { stdio: ['ignore', 'pipe', 'pipe'] });
    await waitForLine(child, child.stdout, /Ready to accept connections/, 'redis-server');
  };
  await launch();
  return {
    port,
    url: tls ? `rediss://localhost:${port}/0` : `redis://127.0.0.1:${port}/0`,
    child: () => child,
    // One command over RESP, for checks from the test (the reply's raw text; plain ports only).
    async command(...args) {
      return new Promise((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1');
        let text = '';
        socket.on('connect', () => {
          socket.write(`*${args.length}\r\n` +
                       args.map((a) => `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`).join(''));
        });
        socket.on('data', (d) => {
          text += d.toString();
          if (text.endsWith('\r\n')) socket.end();
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
    },
    async kill() {
      child.kill('SIGKILL');
      await exited(child);
    },
    restart: launch,
    async stop() {
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

// A port nothing listens on (bound, then released).
export async function closedPort() {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  await new Promise((r) => server.close(r));
  return port;
}

// An HTTP request on a fresh connection. Resolves to {status, headers, body}.
export function request(port, { method = 'POST', path: target = '/v1/chat/completions',
                                headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined
      : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const req = http.request({
      host: '127.0.0.1', port, method, path: target, agent: false,
      headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
                 ...headers },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers,
                                    body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

// Sends raw bytes on a fresh socket and collects everything until the server closes it or
// `idleMs` passes without data. Records when each piece arrived.
export function rawExchange(port, bytes, { idleMs = 3000 } = {}) {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const pieces = [];
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let timer = setTimeout(() => socket.destroy(), idleMs);
    socket.on('data', (d) => {
      pieces.push({ at: Date.now() - start, data: d.toString('latin1') });
      clearTimeout(timer);
      timer = setTimeout(() => socket.destroy(), idleMs);
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ pieces, text: pieces.map((p) => p.data).join('') });
    });
  });
}

// Decodes an HTTP/1.1 chunked body (the part after the header block).
export function dechunk(body) {
  let out = '';
  let rest = body;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    if (eol < 0) throw new Error('truncated chunked body');
    const size = parseInt(rest.slice(0, eol), 16);
    if (Number.isNaN(size)) throw new Error(`bad chunk size line: ${rest.slice(0, eol)}`);
    if (size === 0) {
      if (rest.slice(eol, eol + 4) !== '\r\n\r\n') throw new Error('bad last chunk');
      return out;
    }
    out += rest.slice(eol + 2, eol + 2 + size);
    if (rest.slice(eol + 2 + size, eol + 4 + size) !== '\r\n') throw new Error('bad chunk end');
    rest = rest.slice(eol + 4 + size);
  }
}

// A group of one deployment on the mock, in YAML.
export function group(name, mockPort, model = name, extra = '') {
  return `  - name: ${name}
    deployments:
      - {provider: openai, model: ${model}, api_base: "http://127.0.0.1:${mockPort}/v1"${extra}}
`;
}
