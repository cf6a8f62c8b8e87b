import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { buildApp, listen, loadConfigFile, type Gatehouse, type RunningServer } from '@gatehouse-auth/core';
import { provisionAlice, type ProvisionedAlice } from './alice.js';
import { DemoClient, SIGNED_OUT_PATH } from './client.js';

export { ALICE, totpCode } from './alice.js';

export interface DemoOptions {
  /** Gatehouse's port (default 3000) and the demo client's (default 8080); 0 = any free port. */
  port?: number;
  clientPort?: number;
  /** The config file (default: config/default.yaml, the demo config). */
  config?: string;
  /** Where the demo's own SQLite database goes; it starts empty every run. */
  dataDir?: string;
}

export interface RunningDemo {
  issuer: string;
  clientUrl: string;
  adminToken: string;
  alice: ProvisionedAlice;
  close(): Promise<void>;
}

const DEMO_APP = 'demo-app';

/**
 * The walkthrough in one call: Gatehouse on the demo config with an admin token and a database
 * of its own, alice with a password, TOTP and backup codes, and the demo client on
 * localhost:<clientPort> that the demo app's redirect URI points at.
 */
export async function startDemo(opts: DemoOptions = {}): Promise<RunningDemo> {
  const dataDir = path.resolve(opts.dataDir ?? 'data/demo');
  // The issuer names the port, so it is chosen before the server starts; a port in use stops the
  // demo before it touches the data of another run that may still be serving.
  const port = opts.port === 0 ? await freePort() : await ensureFree(opts.port ?? 3000);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const adminToken = process.env.GATEHOUSE_ADMIN_TOKEN || randomBytes(32).toString('hex');
  const client = new DemoClient();
  // The client's port first: the demo app's redirect URI names it.
  const clientPort = await client.listen('127.0.0.1', opts.clientPort ?? 8080);
  let gatehouse: Gatehouse | null = null;
  let running: RunningServer | null = null;
  try {
    const env = {
      ...process.env,
      GATEHOUSE_ADMIN_TOKEN: adminToken,
      PORT: String(port),
      ISSUER: `http://localhost:${port}`,
      DATABASE_URL: `sqlite:${path.join(dataDir, 'gatehouse.db')}`,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    };
    const loaded = loadConfigFile(path.resolve(opts.config ?? 'config/default.yaml'), env);
    loaded.config.server.host = '127.0.0.1';
    loaded.config.secrets.key_file = path.join(dataDir, 'encryption.key');
    const app = loaded.config.apps.find((a) => a.client_id === DEMO_APP);
    if (!app?.client_secret) throw new Error(`the config has no confidential app "${DEMO_APP}"`);
    const redirectUri = `http://localhost:${clientPort}/callback`;
    app.redirect_uris = [redirectUri];
    // Its "Sign out" goes through Gatehouse's end-session endpoint and comes back here.
    app.post_logout_redirect_uris = [`http://localhost:${clientPort}${SIGNED_OUT_PATH}`];
    gatehouse = await buildApp(loaded);
    running = await listen(gatehouse);
    const issuer = gatehouse.config.issuer;
    // Back-channel calls go to the address bound (localhost may resolve to ::1 first).
    const backChannel = `http://127.0.0.1:${running.port}`;
    client.configure(issuer, backChannel, { clientId: DEMO_APP, clientSecret: app.client_secret, redirectUri });
    const alice = await provisionAlice(backChannel, adminToken);
    const r = running;
    return {
      issuer,
      clientUrl: `http://localhost:${clientPort}/`,
      adminToken,
      alice,
      async close() {
        await client.close();
        // Drains the requests in flight, then closes the database.
        await r.shutdown();
      },
    };
  } catch (err) {
    await client.close();
    if (running) await running.shutdown();
    else await gatehouse?.close();
    throw err;
  }
}

/** A port nobody listens on right now. */
const freePort = () => ensureFree(0);

/** Resolves with the port if it can be bound on 127.0.0.1 (0: any), rejects with EADDRINUSE if not. */
function ensureFree(wanted: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(wanted, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
