import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { buildApp, listen, type Gatehouse, type RunningServer } from '@gatehouse-auth/core';
import { spawnCli } from '../support/cli.js';
import { testConfig } from '../support/config.js';
import { fixtureConfig, fixturePlugin } from '../support/paths.js';

interface Answer {
  status: number;
  body: unknown;
}

/** A client that keeps connections open between requests, as browsers and proxies do. */
const keepAlive = () => new http.Agent({ keepAlive: true });

/**
 * GET resolving with status and JSON body; by default on a connection of its own that closes
 * after the response (`Connection: close`).
 */
function get(port: number, urlPath: string, agent: http.Agent | false = false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as unknown }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Resolves with the error code of a new TCP connection, or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('graceful shutdown', function () {
  this.timeout(20_000);

  describe('gatehouse start, then SIGTERM', () => {
    let child: ChildProcess | undefined;
    let stdout = '';
    let stderr = '';
    afterEach(() => {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      child = undefined;
    });

    /** Starts the CLI on a free port and resolves with the port from the 'gatehouse listening' log line. */
    function start(config = 'valid.yaml'): Promise<number> {
      stdout = '';
      stderr = '';
      child = spawnCli(['start', '--config', fixtureConfig(config)], { env: { PORT: '0' } });
      child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      return new Promise((resolve, reject) => {
        child!.stdout!.setEncoding('utf8').on('data', (d: string) => {
          stdout += d;
          for (const line of stdout.split('\n')) {
            if (!line.startsWith('{')) continue;
            const entry = JSON.parse(line) as { msg?: string; port?: number };
            if (entry.msg === 'gatehouse listening') resolve(entry.port!);
          }
        });
        child!.once('exit', (code) => reject(new Error(`gatehouse exited with ${code} before listening: ${stderr}`)));
      });
    }

    const exited = (c: ChildProcess) =>
      new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
        if (c.exitCode !== null || c.signalCode !== null) resolve({ code: c.exitCode, signal: c.signalCode });
        else c.once('exit', (code, signal) => resolve({ code, signal }));
      });

    /** Fires a 1 s request, sends SIGTERM while it runs, checks it all; resolves with ms from SIGTERM to exit. */
    async function sigtermDuringRequest(agent: http.Agent | false): Promise<number> {
      const port = await start();
      expect(port).to.be.a('number').and.greaterThan(0);
      expect((await get(port, '/health/ready')).status).to.equal(200);

      const inFlight = get(port, '/fixture/slow?ms=1000', agent);
      await sleep(250);
      const signalledAt = Date.now();
      child!.kill('SIGTERM');
      await sleep(150);
      expect(await tryConnect(port)).to.equal('ECONNREFUSED');

      expect(await inFlight).to.deep.equal({ status: 200, body: { slow: true } });
      const exit = await exited(child!);
      expect(exit).to.deep.equal({ code: 0, signal: null });
      expect(stderr).to.equal('');
      expect(stdout).to.include('"msg":"shutdown complete"');
      return Date.now() - signalledAt;
    }

    it('finishes the in-flight request, refuses new connections, exits 0 promptly', async () => {
      // The fixture allows 5 s; with nothing in flight any more the process must not wait for it.
      expect(await sigtermDuringRequest(false)).to.be.lessThan(3000);
    });

    it('exits promptly when the in-flight request came on a keep-alive connection', async () => {
      expect(await sigtermDuringRequest(keepAlive())).to.be.lessThan(3000);
    });

    it('with server.shutdown_delay_ms, keeps serving (readiness 503) while balancers notice, then drains and exits 0', async () => {
      const port = await start('shutdown-delay.yaml');
      const agent = keepAlive();
      expect((await get(port, '/health/ready', agent)).status).to.equal(200);
      const signalledAt = Date.now();
      child!.kill('SIGTERM');
      await sleep(200);
      // Requests already on their way, on kept-alive connections and new ones, are served.
      expect((await get(port, '/health/ready', agent)).status).to.equal(503);
      expect((await get(port, '/health/live', agent)).status).to.equal(200);
      expect(await tryConnect(port)).to.equal('connected');
      expect((await get(port, '/health/live')).status).to.equal(200);
      expect(await exited(child!)).to.deep.equal({ code: 0, signal: null });
      expect(Date.now() - signalledAt).to.be.within(800, 3000);
      expect(stdout).to.include('"msg":"shutting down: not ready, still serving while balancers notice"');
      expect(stderr).to.equal('');
      agent.destroy();
    });

    it('with nothing in flight, SIGTERM exits 0 at once', async () => {
      const port = await start();
      expect((await get(port, '/health/live')).status).to.equal(200);
      const signalledAt = Date.now();
      child!.kill('SIGTERM');
      expect(await exited(child!)).to.deep.equal({ code: 0, signal: null });
      expect(Date.now() - signalledAt).to.be.lessThan(2000);
    });
  });

  describe('in process: listen and shutdown()', () => {
    let gatehouse: Gatehouse;
    let running: RunningServer;
    const startServer = async (overrides: Record<string, unknown> = {}) => {
      gatehouse = await buildApp(testConfig([{ path: fixturePlugin('valid') }], overrides));
      running = await listen(gatehouse);
    };
    afterEach(async () => {
      await running?.shutdown();
    });

    it('listens on a free port when server.port is 0', async () => {
      await startServer();
      expect(running.port).to.be.greaterThan(0);
      expect(await get(running.port, '/health/ready')).to.deep.equal({ status: 200, body: { status: 'ok' } });
    });

    /** Shuts down during a 600 ms request; checks it all; resolves with the ms shutdown() took. */
    async function shutdownDuringRequest(agent: http.Agent | false): Promise<number> {
      await startServer();
      const inFlight = get(running.port, '/fixture/slow?ms=600', agent);
      await sleep(100);
      const startedAt = Date.now();
      const done = running.shutdown();
      expect(running.shutdown()).to.equal(done);
      await sleep(50);
      expect(await tryConnect(running.port)).to.equal('ECONNREFUSED');
      expect(await inFlight).to.deep.equal({ status: 200, body: { slow: true } });
      await done;
      const took = Date.now() - startedAt;
      expect(running.server.listening).to.equal(false);
      let dbClosed = false;
      await gatehouse.container.cradle.sequelize.query('SELECT 1').catch(() => (dbClosed = true));
      expect(dbClosed).to.equal(true);
      return took;
    }

    it('finishes the in-flight request, refuses new connections, then closes the database', async () => {
      expect(await shutdownDuringRequest(false)).to.be.lessThan(2000);
    });

    it('finishes promptly when the in-flight request came on a keep-alive connection', async () => {
      expect(await shutdownDuringRequest(keepAlive())).to.be.lessThan(2000);
    });

    it('cuts requests still running after server.shutdown_timeout_ms, then waits shutdown_settle_ms for their handlers', async () => {
      await startServer({ server: { shutdown_timeout_ms: 300, shutdown_settle_ms: 300 } });
      const inFlight = get(running.port, '/fixture/slow?ms=5000').then(
        () => 'answered',
        (err: NodeJS.ErrnoException) => err.code ?? err.message,
      );
      await sleep(100);
      const startedAt = Date.now();
      await running.shutdown();
      expect(Date.now() - startedAt).to.be.within(550, 1800);
      expect(await inFlight).to.equal('ECONNRESET');
    });

    describe('with TLS from config', () => {
      let dir: string;
      before(function () {
        dir = mkdtempSync(path.join(os.tmpdir(), 'gh-tls-'));
        try {
          execFileSync(
            'openssl',
            [
              'req',
              '-x509',
              '-newkey',
              'rsa:2048',
              '-nodes',
              '-days',
              '1',
              '-subj',
              '/CN=127.0.0.1',
              '-keyout',
              'key.pem',
              '-out',
              'cert.pem',
            ],
            { cwd: dir, stdio: 'ignore' },
          );
        } catch (err) {
          console.log(`      openssl is not available (${(err as Error).message}); skipping the TLS test`);
          this.skip();
        }
      });
      after(() => rmSync(dir, { recursive: true, force: true }));

      it('serves HTTPS with server.tls.cert and key', async () => {
        await startServer({ server: { tls: { cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') } } });
        const ca = readFileSync(path.join(dir, 'cert.pem'));
        const answer = await new Promise<Answer>((resolve, reject) => {
          https
            .get(
              { host: '127.0.0.1', port: running.port, path: '/health/live', ca, checkServerIdentity: () => undefined },
              (res) => {
                let text = '';
                res.setEncoding('utf8').on('data', (d: string) => (text += d));
                res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as unknown }));
              },
            )
            .on('error', reject);
        });
        expect(answer).to.deep.equal({ status: 200, body: { status: 'ok' } });
      });
    });
  });
});
