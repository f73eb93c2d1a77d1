// `npm start`: the example server on 127.0.0.1:3000 for a local demo. Its requestState key is generated once and
// kept in ./data/state-keys (0600), so rounds survive restarts and nothing warns about MRTR_STATE_KEYS each time;
// it says so once, when it creates the key. A fleet or a public host sets MRTR_STATE_KEYS (or --state-keys) itself.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const cli = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
const extra = process.argv.slice(2);
const host = extra.includes('--host') ? extra[extra.indexOf('--host') + 1] : '127.0.0.1';
const loopback = ['127.0.0.1', 'localhost', '::1'].includes(host ?? '');
const env = { ...process.env };
if (!env.MRTR_STATE_KEYS && !extra.includes('--state-keys') && loopback) {
  const file = join('data', 'state-keys');
  if (!existsSync(file)) {
    mkdirSync('data', { recursive: true, mode: 0o700 });
    const key = execFileSync(process.execPath, [cli, 'keys', 'generate'], { encoding: 'utf8' }).trim();
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    process.stderr.write(
      `npm start: generated a requestState key for this loopback demo in ${file} (mode 0600); it is used on every start from now on\n`,
    );
  }
  env.MRTR_STATE_KEYS = readFileSync(file, 'utf8').trim();
}
const child = spawn(
  process.execPath,
  [cli, 'serve', '--fixture', 'example', '--port', '3000', '--store', 'sqlite:./data/replay.db', ...extra],
  { stdio: 'inherit', env },
);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, sig) => process.exit(code ?? (sig ? 128 + 15 : 1)));
