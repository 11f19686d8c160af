// Shared pieces of the end-to-end suite: ports, data directories, tauri-driver, a WebDriver
// session on the real app binary, teardown that leaves no process behind, screenshots,
// process memory from /proc and a small REST client for the app's local API and the server.
//
// Every process this module starts is spawned in its own process group and remembered;
// teardown signals the whole group and then every descendant still alive, by pid.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

import { remote } from 'webdriverio';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(HERE, '..', '..');
export const APP_BIN = path.resolve(process.env.APP_BIN ?? path.join(REPO_ROOT, 'target/debug/petstore-desktop'));
export const SERVER_BIN = path.resolve(
  process.env.SERVER_BIN ?? path.join(REPO_ROOT, 'target/debug/petstore-server'),
);
export const TAURI_DRIVER =
  process.env.TAURI_DRIVER ??
  [path.join(os.homedir(), '.cargo/bin/tauri-driver'), '/usr/local/bin/tauri-driver'].find((p) =>
    fs.existsSync(p),
  ) ??
  'tauri-driver';
export const ARTIFACTS = path.join(REPO_ROOT, 'target', 'e2e');
export const LOGS = path.join(ARTIFACTS, 'logs');

/** How long one scenario may take, whole; node's runner cancels it after that. */
export const TEST_TIMEOUT_MS = 120_000;
/** How long the UI gets to show what a step should produce. */
export const UI_TIMEOUT_MS = 10_000;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A sleep that does not keep the process alive: the losing side of a Promise.race. */
const grace = (ms) => new Promise((r) => setTimeout(r, ms).unref());

// ---------------------------------------------------------------------------------------
// Ports and directories

/** A port free on 127.0.0.1 right now (the OS picks it). */
export async function freePort() {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** A fresh, empty directory under the system temp dir. */
export function tempDir(prefix = 'petstore-e2e-') {
  // run.sh hands a per-run directory that it removes at the end, whatever happened.
  return fs.mkdtempSync(path.join(process.env.E2E_TMP ?? os.tmpdir(), prefix));
}

/** Resolves when something accepts TCP connections on 127.0.0.1:port. */
export async function waitForPort(port, timeoutMs = 15_000, isAlive = () => true) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const sock = net.connect({ host: '127.0.0.1', port });
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (!isAlive()) throw new Error(`the process meant to listen on port ${port} exited`);
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Polls `fn` until it returns a truthy value; returns that value. */
export async function until(fn, { timeout = UI_TIMEOUT_MS, interval = 100, message = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${message}${last ? `: ${last.message}` : ''}`);
    }
    await sleep(interval);
  }
}

// ---------------------------------------------------------------------------------------
// Processes

/** pid -> parent pid, for every process visible in /proc. */
function processTable() {
  const table = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name may contain spaces and parentheses: the fields follow the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(name), Number(fields[1]));
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** Every live descendant of `pid` (children, grandchildren, ...), not `pid` itself. */
export function descendants(pid) {
  const table = processTable();
  const out = [];
  const queue = [pid];
  while (queue.length) {
    const parent = queue.shift();
    for (const [child, ppid] of table) {
      if (ppid === parent && !out.includes(child)) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    // A zombie still answers signal 0; it is dead for our purposes.
    const state = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state !== 'Z';
  } catch {
    return false;
  }
}

/** The executable of a process, or '' once it is gone. */
export function exeOf(pid) {
  try {
    return fs.readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
  } catch {
    return '';
  }
}

export function commOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Resident memory of one process in bytes (0 once it is gone). */
export function rssBytes(pid) {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** When the process started, in ms since boot (from /proc/<pid>/stat, 10 ms resolution). */
export function startedAtMsSinceBoot(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]); // field 22 of stat, counted from field 3 here
  return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
}

/** Now, in ms since boot, on the same clock as startedAtMsSinceBoot. */
export function nowMsSinceBoot() {
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;
}

// Every Proc still running, killed at once if this process exits or is told to stop, so
// that a cancelled or timed-out test leaves nothing behind. run.sh also gets each group's
// id (E2E_PID_FILE) and kills any group left when the run ends.
const live = new Set();
function killAllNow() {
  for (const proc of live) proc.killNow();
}
process.once('exit', killAllNow);
// A test that timed out never reaches its finally block, and its processes would keep this
// file's process (and the run) waiting: after the file's last test, close whatever is open.
const openThings = new Set();
after(async () => {
  for (const thing of [...openThings]) await thing.close().catch(() => {});
  killAllNow();
});
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
]) {
  process.once(signal, () => {
    killAllNow();
    process.exit(code);
  });
}

/**
 * A spawned process in its own process group, its output appended to a log file. `stop()`
 * signals the group and then each descendant still alive, TERM first and KILL after a grace.
 */
export class Proc {
  constructor(name, cmd, args, { env = {}, logFile } = {}) {
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    this.name = name;
    this.logFile = logFile;
    const fd = fs.openSync(logFile, 'a');
    fs.writeSync(fd, `\n--- ${new Date().toISOString()} ${cmd} ${args.join(' ')}\n`);
    this.child = spawn(cmd, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', fd, fd],
      detached: true, // own process group, so the whole tree can be signalled at once
    });
    fs.closeSync(fd);
    this.pid = this.child.pid;
    this.exited = false;
    if (this.pid) {
      live.add(this);
      if (process.env.E2E_PID_FILE) fs.appendFileSync(process.env.E2E_PID_FILE, `${this.pid}\n`);
    }
    this.exit = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exited = true;
        resolve({ code, signal });
      });
      this.child.once('error', (error) => {
        this.exited = true;
        resolve({ error });
      });
    });
    // Seen descendants, so that ones re-parented away (e.g. to init) are still found.
    this.known = new Set();
  }

  alive() {
    return !this.exited;
  }

  /** Remembers the current descendants; call while the tree is up. */
  track() {
    if (!this.pid) return [];
    const now = descendants(this.pid);
    for (const pid of now) this.known.add(pid);
    return now;
  }

  /** SIGKILL to the group and every known descendant, synchronously (for exit handlers). */
  killNow() {
    if (!this.pid) return;
    this.track();
    for (const target of [-this.pid, ...this.known]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone
      }
    }
    live.delete(this);
  }

  async stop(graceMs = 3_000) {
    if (!this.pid) return;
    this.track();
    const targets = () => [this.pid, ...this.known].filter(isAlive);
    const signalAll = (sig) => {
      try {
        process.kill(-this.pid, sig);
      } catch {
        // group gone
      }
      for (const pid of [...this.known]) {
        try {
          if (isAlive(pid)) process.kill(pid, sig);
        } catch {
          // gone
        }
      }
    };
    signalAll('SIGTERM');
    const deadline = Date.now() + graceMs;
    while (targets().length && Date.now() < deadline) await sleep(50);
    if (targets().length) {
      signalAll('SIGKILL');
      const hard = Date.now() + 2_000;
      while (targets().length && Date.now() < hard) await sleep(50);
    }
    await Promise.race([this.exit, grace(1_000)]);
    const left = targets();
    if (!left.length) live.delete(this);
    if (left.length) throw new Error(`${this.name}: processes still alive after SIGKILL: ${left.join(', ')}`);
  }
}

// ---------------------------------------------------------------------------------------
// REST

/** A tiny client for a Petstore API on 127.0.0.1 with a Bearer key. */
export function restClient(port, key) {
  const base = `http://127.0.0.1:${port}`;
  const call = async (method, p, body) => {
    const res = await fetch(base + p, {
      method,
      headers: {
        ...(key ? { Authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: res.status, headers: res.headers, body: json };
  };
  /** Like call, but throws unless the status is the expected one; returns the body. */
  const expect = async (status, method, p, body) => {
    const r = await call(method, p, body);
    if (r.status !== status) {
      throw new Error(`${method} ${p}: expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`);
    }
    return r.body;
  };
  return {
    base,
    call,
    expect,
    get: (p) => expect(200, 'GET', p),
    post: (p, body) => expect(201, 'POST', p, body),
    put: (p, body) => expect(200, 'PUT', p, body),
  };
}

// ---------------------------------------------------------------------------------------
// The app under WebDriver

/** A random key of 32 URL-safe characters (well over the 22 the server asks for). */
export function randomKey() {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url');
}

function logName(label) {
  return path.join(LOGS, `${label.replace(/[^\w.-]+/g, '_')}.log`);
}

/**
 * Starts tauri-driver (which starts WebKitWebDriver, which starts the app) on free ports,
 * with a fresh data directory and local API port (or the given ones, to restart the app), opens a WebDriver session and waits for
 * the Pets screen (or the `firstScreen` selector: the startup failure screen, say). Returns a
 * handle; always call `close()` (in a finally block).
 *
 * `timings.firstScreenMsSinceBoot` is when the first screen showed; with `readySelectors`,
 * each is then waited for in turn (as tightly), and `timings.ready` holds when each showed.
 */
export async function launchApp(
  label,
  { env = {}, dataDir, apiPort, firstScreen = '#pets-title', readySelectors = [], readyTimeout = 30_000 } = {},
) {
  if (!fs.existsSync(APP_BIN)) throw new Error(`app binary missing: ${APP_BIN} (cargo build -p petstore-desktop)`);
  const app = {
    label,
    // A data directory handed in (to restart on the same data) is the caller's to remove.
    dataDir: dataDir ?? tempDir('petstore-e2e-data-'),
    ownsDataDir: !dataDir,
    apiPort: apiPort ?? (await freePort()),
    driverPort: await freePort(),
    nativePort: await freePort(),
    driver: null,
    browser: null,
    timings: {},
  };
  app.close = () => closeApp(app);
  openThings.add(app);
  try {
    app.driver = new Proc(
      'tauri-driver',
      TAURI_DRIVER,
      ['--port', String(app.driverPort), '--native-port', String(app.nativePort)],
      {
        env: {
          PETSTORE_DATA_DIR: app.dataDir,
          PETSTORE_LOCAL_API_PORT: String(app.apiPort),
          NO_AT_BRIDGE: '1',
          RUST_LOG: process.env.RUST_LOG ?? 'info',
          ...env,
        },
        logFile: logName(label),
      },
    );
    await waitForPort(app.driverPort, 15_000, () => app.driver.alive());
    // tauri-driver forwards the session request to WebKitWebDriver, which it started but which
    // may not listen yet on a busy machine ("Connection refused" and the session fails).
    await waitForPort(app.nativePort, 15_000, () => app.driver.alive());
    app.timings.sessionRequestedAt = Date.now();
    app.browser = await remote({
      hostname: '127.0.0.1',
      port: app.driverPort,
      capabilities: {
        'tauri:options': { application: APP_BIN },
        // WebKitWebDriver speaks classic WebDriver only: WebdriverIO 9 must not try BiDi.
        'wdio:enforceWebDriverClassic': true,
      },
      logLevel: process.env.WDIO_LOG_LEVEL ?? 'warn',
      // One WebDriver request may take this long; a wedged driver then fails the test, not the run.
      connectionRetryTimeout: 30_000,
      connectionRetryCount: 0,
      waitforTimeout: UI_TIMEOUT_MS,
      waitforInterval: 50,
    });
    app.timings.sessionOpenedAt = Date.now();
    app.appPid = findAppPid(app);
    await waitVisibleFast(app.browser, firstScreen, 30_000);
    app.timings.firstScreenAt = Date.now();
    app.timings.firstScreenMsSinceBoot = nowMsSinceBoot();
    // What "the first screen with its data" means is the caller's: each selector, in turn,
    // polled as tightly as the heading, with the time it was first seen.
    app.timings.ready = [];
    for (const selector of readySelectors) {
      await waitVisibleFast(app.browser, selector, readyTimeout);
      app.timings.ready.push({ selector, msSinceBoot: nowMsSinceBoot() });
    }
    app.driver.track();
    return app;
  } catch (e) {
    await closeApp(app).catch(() => {});
    throw e;
  }
}

/** Like waitVisible, polling every 25 ms, for timing the first screen. */
async function waitVisibleFast(browser, selector, timeout) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const p = await probe(browser, selector);
    if (p && p.visible) return p;
    if (Date.now() > deadline) throw new Error(`${selector} not visible after ${timeout} ms`);
    await sleep(25);
  }
}

/** The app's pid: the descendant of tauri-driver that runs APP_BIN. */
function findAppPid(app) {
  app.driver.track();
  const pid = descendants(app.driver.pid).find((p) => exeOf(p) === APP_BIN);
  if (!pid) throw new Error('the app process was not found under tauri-driver');
  return pid;
}

/** The app process and every process it started (WebKit's web and network processes). */
export function appProcesses(app) {
  if (!app.appPid || !isAlive(app.appPid)) return [];
  return [app.appPid, ...descendants(app.appPid)].map((pid) => ({ pid, comm: commOf(pid), rss: rssBytes(pid) }));
}

/** Proportional set size of one process in bytes: shared pages divided among their users. */
export function pssBytes(pid) {
  try {
    const m = /^Pss:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * The resident memory of the app and all its processes now: `mb` (the RSS sum, one
 * decimal), `pssMb` (the PSS sum: WebKit's libraries, mapped by each process, counted once)
 * and `breakdown` ("petstore-deskto:95,WebKitWebProces:120,...", RSS in MB each).
 */
export function appMemory(app) {
  const procs = appProcesses(app);
  const mb = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
  return {
    procs,
    mb: mb(procs.reduce((sum, p) => sum + p.rss, 0)),
    pssMb: mb(procs.reduce((sum, p) => sum + pssBytes(p.pid), 0)),
    breakdown: procs.map((p) => `${p.comm}:${Math.round(p.rss / 1024 / 1024)}`).join(','),
  };
}

async function closeApp(app) {
  openThings.delete(app);
  const errors = [];
  if (app.browser) {
    // Ends the session (the app quits); bounded, because a wedged driver must not hang us.
    await Promise.race([app.browser.deleteSession().catch((e) => errors.push(e)), grace(5_000)]);
    app.browser = null;
  }
  if (app.driver) {
    await app.driver.stop().catch((e) => errors.push(e));
  }
  if (app.ownsDataDir) fs.rmSync(app.dataDir, { recursive: true, force: true });
  const fatal = errors.filter((e) => /still alive/.test(e.message));
  if (fatal.length) throw fatal[0];
}

/**
 * Kills the app process with SIGKILL (a crash, a power cut: no chance to tidy up), then
 * ends what is left of its WebDriver session and tauri-driver. To start it again on the same
 * data, `launchApp(label, { dataDir: app.dataDir, apiPort: app.apiPort, ... })`.
 */
export async function killApp(app) {
  const pid = app.appPid;
  if (!pid || !isAlive(pid)) throw new Error(`killApp: the app process ${pid} is not running`);
  process.kill(pid, 'SIGKILL');
  await until(() => !isAlive(pid), { timeout: 5_000, message: `the app (pid ${pid}) to die of SIGKILL` });
  await closeApp(app);
}

/** The local API key, once the app has written it. */
export async function localApiKey(app) {
  const file = path.join(app.dataDir, 'local-api.key');
  return until(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim(), {
    message: `the key file ${file}`,
  });
}

// ---------------------------------------------------------------------------------------
// The headless server

/**
 * Starts petstore-server on a free port with a fresh database and a random key: a SQLite
 * file, or the PostgreSQL database E2E_SERVER_DB names (run.sh's second run of remote mode;
 * one test uses it). `halt()` stops the process and keeps its database and port, as a
 * server that went down; `resume()` starts it again on both. `allowedHosts` are passed as
 * `--allowed-host` (a server reached through a proxy sees the proxy's port in `Host`).
 */
export async function startServer(label, { allowedHosts = [] } = {}) {
  if (!fs.existsSync(SERVER_BIN)) throw new Error(`server binary missing: ${SERVER_BIN} (cargo build --bin petstore-server)`);
  const dir = tempDir('petstore-e2e-server-');
  const port = await freePort();
  const key = randomKey();
  const spawnServer = () =>
    new Proc(
      'petstore-server',
      SERVER_BIN,
      [
        'serve',
        '--db',
        process.env.E2E_SERVER_DB || path.join(dir, 'petstore.db'),
        '--listen',
        `127.0.0.1:${port}`,
        ...allowedHosts.flatMap((host) => ['--allowed-host', host]),
      ],
      { env: { PETSTORE_API_KEY: key }, logFile: logName(`${label}-server`) },
    );
  let proc = spawnServer();
  const ready = async () => {
    await waitForPort(port, 15_000, () => proc.alive());
    await until(async () => (await server.api.call('GET', '/health')).status === 200, { message: 'server health' });
  };
  const server = {
    port,
    key,
    url: `http://127.0.0.1:${port}`,
    api: restClient(port, key),
    close() {
      return this.stop();
    },
    /** The server goes down (SIGTERM, as a service manager would): its port refuses. */
    async halt() {
      await proc.stop();
    },
    /** The server comes back, on the same port and database. */
    async resume() {
      if (proc.alive()) throw new Error('resume(): the server is still running');
      proc = spawnServer();
      await ready();
    },
    async stop() {
      openThings.delete(server);
      try {
        await proc.stop();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  openThings.add(server);
  try {
    await ready();
    return server;
  } catch (e) {
    await server.stop().catch(() => {});
    throw e;
  }
}

/**
 * A TCP proxy on a free port of 127.0.0.1 in front of `targetPort`, for a network that
 * fails without saying so. Its modes:
 * - `forward()` (the start): each connection is piped to the target and back;
 * - `blackhole()`: connections are accepted and never answered, and those already open go
 *   silent (nothing passes either way, nothing is closed), as when a link is gone;
 * - `loseAnswers()`: requests still reach the target, its answers are thrown away, on new
 *   connections and open ones: a write is applied and its sender never hears so.
 * Back to `forward()`, the connections that went silent are dropped (their requests were
 * given up long ago) and new ones pass again. `held` counts the connections accepted while
 * not forwarding.
 */
export async function startProxy(label, targetPort) {
  const conns = new Set();
  const log = fs.createWriteStream(logName(`${label}-proxy`), { flags: 'a' });
  const note = (line) => log.write(`${new Date().toISOString()} ${line}\n`);
  const proxy = {
    mode: 'forward',
    held: 0,
    port: 0,
    url: '',
    forward() {
      note(`forward (${[...conns].filter((c) => c.silent).length} silent connections dropped)`);
      proxy.mode = 'forward';
      for (const c of [...conns]) if (c.silent) drop(c);
    },
    blackhole() {
      note(`blackhole (${conns.size} open connections go silent)`);
      proxy.mode = 'blackhole';
      for (const c of conns) silence(c);
    },
    loseAnswers() {
      note(`lose answers (on ${conns.size} open connections too)`);
      proxy.mode = 'lose-answers';
      for (const c of conns) deafen(c);
    },
    async close() {
      openThings.delete(proxy);
      for (const c of [...conns]) drop(c);
      await new Promise((resolve) => server.close(() => resolve()));
      log.end();
    },
  };
  const drop = (c) => {
    conns.delete(c);
    c.client.destroy();
    c.upstream?.destroy();
  };
  /** Nothing passes either way any more. */
  const silence = (c) => {
    c.silent = true;
    if (c.upstream) {
      c.client.unpipe(c.upstream);
      c.upstream.unpipe(c.client);
      c.upstream.pause();
    }
    c.client.pause();
  };
  /** The requests pass, the answers are read and thrown away. */
  const deafen = (c) => {
    c.silent = true;
    if (!c.upstream) return; // black-holed before: stays so
    c.upstream.unpipe(c.client);
    c.upstream.on('data', () => {});
    c.upstream.resume();
  };
  const server = net.createServer((client) => {
    const c = { client, upstream: null, silent: false };
    conns.add(c);
    client.on('error', () => drop(c));
    client.on('close', () => drop(c));
    if (proxy.mode === 'blackhole') {
      proxy.held += 1;
      silence(c);
      return;
    }
    const upstream = net.connect({ host: '127.0.0.1', port: targetPort });
    c.upstream = upstream;
    // The target down: the connection is closed, as the target's refusal would be seen.
    upstream.on('error', () => drop(c));
    upstream.on('close', () => !c.silent && drop(c));
    client.pipe(upstream);
    upstream.pipe(client);
    if (proxy.mode === 'lose-answers') {
      proxy.held += 1;
      deafen(c);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  proxy.port = server.address().port;
  proxy.url = `http://127.0.0.1:${proxy.port}`;
  note(`listening on ${proxy.port}, forwarding to ${targetPort}`);
  openThings.add(proxy);
  return proxy;
}

/**
 * Fills a database file with `pets` demo pets through `petstore-server seed` (SERVER_BIN);
 * returns how long it took in ms. The process is the suite's, killed if the test is cut short.
 */
export async function seedDatabase(dbFile, pets, label = 'seed') {
  if (!fs.existsSync(SERVER_BIN)) {
    throw new Error(`server binary missing: ${SERVER_BIN} (cargo build --bin petstore-server)`);
  }
  const started = Date.now();
  const proc = new Proc('petstore-server seed', SERVER_BIN, ['seed', '--db', dbFile, '--pets', String(pets)], {
    logFile: logName(label),
  });
  const { code, signal, error } = await proc.exit;
  live.delete(proc);
  if (error || code !== 0) {
    throw new Error(`seeding ${pets} pets failed (${error?.message ?? `exit ${code ?? signal}`}); see ${proc.logFile}`);
  }
  return Date.now() - started;
}

// ---------------------------------------------------------------------------------------
// Figures

/** The median of a list of numbers (the mean of the middle two for an even count). */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Prints `key=value` lines and writes them to `file` (created with its directory). */
export function writeFigures(file, lines) {
  for (const line of lines) console.log(line);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

// ---------------------------------------------------------------------------------------
// UI helpers
//
// Reads go through one executeScript each (one WebDriver round trip, no hidden concurrent
// requests); clicks and typing go through WebDriver's element commands, as a person's would.

export const sel = (testid) => `[data-testid="${testid}"]`;

/** WebDriver key codes. */
export const KEY = {
  CONTROL: '\uE009',
  SHIFT: '\uE008',
  TAB: '\uE004',
  ENTER: '\uE007',
  ESCAPE: '\uE00C',
  ARROW_DOWN: '\uE015',
};

/**
 * What a USB scanner does: the code's keys, then Enter, a few milliseconds apart, into the
 * page (nothing focused). Each key pressed and released explicitly: `browser.keys` loses
 * the second of two equal keys in a row on WebKitWebDriver.
 */
export async function scan(browser, code) {
  await browser.executeScript('document.activeElement && document.activeElement.blur()', []);
  const keys = [...code, KEY.ENTER].flatMap((value) => [
    { type: 'keyDown', value },
    { type: 'keyUp', value },
  ]);
  await browser.performActions([{ type: 'key', id: 'scanner', actions: keys }]);
}

/** The app's screens, in the menu's order. */
export const SCREENS = ['pets', 'orders', 'sales', 'inventory', 'categories', 'activity', 'settings'];

/** What is wider than its box on the screen shown: the page, the main area, a table's frame, a panel. */
export function overflowing(browser) {
  return browser.executeScript(
    `const wide = (el) => el.scrollWidth > el.clientWidth + 1;
     const boxes = [document.documentElement, document.querySelector('main'), ...document.querySelectorAll('main .table-wrap, main section, main form, main fieldset')];
     return boxes.filter(wide).map((el) => (el.className || el.tagName) + ': ' + el.scrollWidth + ' > ' + el.clientWidth);`,
    [],
  );
}

/** The element with this data-testid. */
export function byTestId(browser, testid) {
  return browser.$(sel(testid));
}

const PROBE = `
  const el = document.querySelector(arguments[0]);
  if (!el) return null;
  const style = getComputedStyle(el);
  return {
    text: (el.innerText ?? el.textContent ?? '').trim(),
    visible: el.getClientRects().length > 0 && style.visibility !== 'hidden' && style.display !== 'none',
    enabled: !el.disabled,
    value: 'value' in el ? String(el.value) : null,
    className: typeof el.className === 'string' ? el.className : '',
  };
`;

/** {text, visible, enabled, value, className} of the first match of a CSS selector, or null. */
export function probe(browser, selector) {
  return browser.executeScript(PROBE, [selector]);
}

/** Waits until the selector matches a visible element; returns its probe. */
export async function waitVisible(browser, selector, { timeout = UI_TIMEOUT_MS, enabled = false } = {}) {
  let last = null;
  try {
    await browser.waitUntil(
      async () => {
        last = await probe(browser, selector);
        return last && last.visible && (!enabled || last.enabled);
      },
      { timeout, interval: 50 },
    );
  } catch {
    throw new Error(`${selector} not ${enabled ? 'visible and enabled' : 'visible'} after ${timeout} ms (last: ${JSON.stringify(last)})`);
  }
  return last;
}

/** Waits until nothing matches the selector. */
export async function waitGone(browser, selector, timeout = UI_TIMEOUT_MS) {
  try {
    await browser.waitUntil(async () => (await probe(browser, selector)) === null, { timeout, interval: 50 });
  } catch {
    throw new Error(`${selector} still there after ${timeout} ms`);
  }
}

/** The trimmed rendered text of the element with this testid, or null if there is none. */
export async function textOf(browser, testid) {
  const p = await probe(browser, sel(testid));
  return p ? p.text : null;
}

/**
 * Waits until the text of the element with this testid satisfies `expected` (a string:
 * equal; a RegExp: matches); returns the text.
 */
export async function waitForText(browser, testid, expected, timeout = UI_TIMEOUT_MS) {
  const ok = (t) => (expected instanceof RegExp ? expected.test(t) : t === expected);
  let last = null;
  try {
    await browser.waitUntil(
      async () => {
        last = await textOf(browser, testid);
        return last !== null && ok(last);
      },
      { timeout, interval: 100 },
    );
  } catch {
    throw new Error(
      `[data-testid="${testid}"] shows ${last === null ? '(nothing: no such element)' : JSON.stringify(last)}, ` +
        `expected ${expected instanceof RegExp ? expected : JSON.stringify(expected)} (waited ${timeout} ms)`,
    );
  }
  return last;
}

/** The ids in data-testids "<prefix><id>" on screen now, e.g. testIds(b, 'order-row-'). */
export function idsWithPrefix(browser, prefix) {
  return browser.executeScript(
    `return [...document.querySelectorAll('[data-testid^="' + arguments[0] + '"]')]
       .map((e) => e.getAttribute('data-testid').slice(arguments[0].length))
       .filter((s) => /^\\d+$/.test(s)).map(Number);`,
    [prefix],
  );
}

/** Clicks the element with this testid once it is visible and enabled. */
export async function click(browser, testid) {
  await waitVisible(browser, sel(testid), { enabled: true });
  await byTestId(browser, testid).click();
}

/** Replaces an input's value by typing, as a person would. */
export async function type(browser, testid, value) {
  await waitVisible(browser, sel(testid), { enabled: true });
  const el = await byTestId(browser, testid);
  await el.clearValue();
  await el.addValue(String(value));
  const now = await probe(browser, sel(testid));
  if (now.value !== String(value)) {
    throw new Error(`typing ${JSON.stringify(value)} into ${testid} left ${JSON.stringify(now.value)}`);
  }
}

/** Picks the option of a <select> (by testid) whose visible text is `text`. */
export async function choose(browser, testid, text) {
  await waitVisible(browser, sel(testid), { enabled: true });
  await (await byTestId(browser, testid)).selectByVisibleText(text);
}

/** Goes to a screen through the nav and waits for its heading. */
export async function navigate(browser, screen) {
  await click(browser, `nav-${screen}`);
  await waitVisible(browser, `#${screen}-title`);
}

/**
 * Saves a WebDriver screenshot of the window under target/e2e/; returns the path.
 *
 * WebKitGTK's automation answers a screenshot only after the page's next presentation
 * update, and a page at rest never has one, so the command waits forever. While it is
 * pending, an invisible style is toggled to make the page paint once.
 */
export async function screenshot(browser, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  let done = false;
  const shot = browser.takeScreenshot().finally(() => (done = true));
  const poke = (async () => {
    for (let i = 0; !done; i++) {
      await sleep(150);
      if (done) break;
      await browser
        .executeScript(`document.body.style.outline = arguments[0] ? '1px solid transparent' : '';`, [i % 2 === 0])
        .catch(() => {});
    }
  })();
  let timer;
  const b64 = await Promise.race([
    shot,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`screenshot ${name} took over 20 s`)), 20_000);
    }),
  ]).finally(() => {
    clearTimeout(timer);
    done = true;
  });
  await poke;
  await browser.executeScript(`document.body.style.outline = '';`, []).catch(() => {});
  fs.writeFileSync(file, Buffer.from(b64, 'base64'));
  return file;
}

/** The text of the error alert on screen, or null. */
export function errorAlertText(browser) {
  return textOf(browser, 'error-alert');
}

/** Chooses a backend in Settings (with a server address and key for Remote) and saves. */
export async function saveBackend(browser, backend, { url, key } = {}) {
  await navigate(browser, 'settings');
  await click(browser, `backend-${backend}`);
  if (backend === 'remote') {
    await type(browser, 'base-url', url);
    await type(browser, 'remote-key', key);
  }
  await click(browser, 'save-settings');
  await waitForText(browser, 'toast', /Settings saved/);
}
