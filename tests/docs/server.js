// Starts the real petstore-server on a fresh database and a free loopback port.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
export const SERVER_BIN = process.env.SERVER_BIN ?? join(ROOT, 'target/debug/petstore-server');
export const KEY = 'psk_docs_page_test_key_0123456789abcdef';

export async function startServer() {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-docs-'));
  const child = spawn(SERVER_BIN, ['serve', '--db', join(dir, 'petstore.db'), '--listen', '127.0.0.1:0'], {
    env: { ...process.env, PETSTORE_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The server prints "Petstore API on http://127.0.0.1:PORT ..." once it listens.
  const origin = await new Promise((resolveOrigin, reject) => {
    const timer = setTimeout(() => reject(new Error('petstore-server did not start within 15 s')), 15_000);
    let seen = '';
    child.stdout.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(/Petstore API on (http:\/\/127\.0\.0\.1:\d+)/);
      if (match) {
        clearTimeout(timer);
        resolveOrigin(match[1]);
      }
    });
    child.on('exit', (code) => reject(new Error(`petstore-server exited with ${code}`)));
  });
  return {
    origin,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((done) => (child.exitCode === null ? child.on('exit', done) : done()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
