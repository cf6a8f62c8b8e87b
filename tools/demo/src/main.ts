import { parseArgs } from 'node:util';
import { ALICE, startDemo, totpCode } from './index.js';

const USAGE = `Usage: npm run demo [-- --port 3000] [--client-port 8080] [--config FILE]

Starts Gatehouse on the demo config with an admin token and a fresh database (./data/demo),
creates alice with a password, TOTP and backup codes, and serves a small OAuth client on
http://localhost:8080 that signs her in. Ctrl+C stops both.
`;

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--${name} must be a port number`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      'client-port': { type: 'string' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const demo = await startDemo({
    port: port(values.port, 3000, 'port'),
    clientPort: port(values['client-port'], 8080, 'client-port'),
    ...(values.config ? { config: values.config } : {}),
    // Where the demo keeps its database (default ./data/demo); the README test points it elsewhere.
    ...(process.env.GATEHOUSE_DEMO_DATA ? { dataDir: process.env.GATEHOUSE_DEMO_DATA } : {}),
  });
  const { alice } = demo;
  process.stdout.write(`
Gatehouse is running at ${demo.issuer}; the demo client at ${demo.clientUrl}

  Open ${demo.clientUrl} in a browser and sign in:
    username  ${ALICE.username}
    password  ${ALICE.password}
  then a second factor, one of:
    backup code   ${alice.backupCodes[0]} (each works once; the others: ${alice.backupCodes.slice(1, 4).join(', ')}, …)
    TOTP          add ${alice.otpauthUri}
                  to an authenticator app (the code right now is ${await totpCode(alice.totpSecret)})
    SMS           the code is shown at ${demo.issuer}/dev/outbox/latest?to=${encodeURIComponent(ALICE.phone)}

  The admin console: ${demo.issuer}/console (alice is its admin: password, then TOTP or a backup code)
  Alice's account page: ${demo.issuer}/account

  The admin API token of this run: export GATEHOUSE_ADMIN_TOKEN=${demo.adminToken}
  Ctrl+C stops the demo.
`);
  const stop = () => {
    demo.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err: unknown) => {
  const e = err as NodeJS.ErrnoException & { port?: number };
  // The usual first-run snag: the quick-start server still holds the port.
  const message =
    e.code === 'EADDRINUSE'
      ? `a port is already in use (${e.message.replace(/^listen /, '')}); stop the other server (npm start?) or pass --port / --client-port`
      : e.message;
  process.stderr.write(`gatehouse-demo: ${message}\n`);
  process.exit(1);
});
