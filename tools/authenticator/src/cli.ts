/**
 * `gatehouse-authenticator`: a simulated authenticator app on the command line. Its device (key
 * pair and binding) lives in a state file; every command reads the inbox first, so each one
 * works on the exchange id the server handed out last.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Authenticator, DeviceCallError, type DeviceState, type Push } from './authenticator.js';
import { describePush } from './describe.js';

const USAGE = `Usage: gatehouse-authenticator <command> [options]

Commands:
  bind <binding_url>     bind a new device to the account that showed the link (QR code)
                         [--name NAME] [--biometric] [--alg ES256|EdDSA] [--client-id ID]
  pushes                 list the pending sign-in requests, with when each was asked for
  approve <push_id>      acknowledge, allow and complete a request in one go:
                         PUSH --number N · PATTERN --pattern 'RED[1,5,9,6]' · FACE --photo FILE
  ack <push_id>          open a request (prints where it comes from)
  allow <push_id>        approve a request (for PUSH, then type the number: verify --number N)
  verify <push_id>       complete an allowed request [--number N | --pattern P | --photo FILE]
  deny <push_id>         refuse a request [--reason TEXT]
  cancel <push_id>       dismiss a request

Options:
  --state FILE           the device's state file, which holds its private key
                         (default ./gatehouse-authenticator.json, or $GATEHOUSE_AUTHENTICATOR_STATE)
  --server URL           send requests here instead of the issuer's URL (bind only; kept)
`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    state: { type: 'string' },
    name: { type: 'string' },
    biometric: { type: 'boolean' },
    alg: { type: 'string' },
    'client-id': { type: 'string' },
    server: { type: 'string' },
    number: { type: 'string' },
    pattern: { type: 'string' },
    photo: { type: 'string' },
    reason: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

const stateFile = values.state ?? process.env.GATEHOUSE_AUTHENTICATOR_STATE ?? 'gatehouse-authenticator.json';
const [command, argument] = positionals;

function load(): Authenticator {
  let text: string;
  try {
    text = readFileSync(stateFile, 'utf8');
  } catch {
    throw new Error(`no device in ${stateFile}: bind one first (gatehouse-authenticator bind <binding_url>)`);
  }
  return Authenticator.restore(JSON.parse(text) as DeviceState);
}

function save(device: Authenticator): void {
  // It holds the private key: readable by its owner only.
  writeFileSync(stateFile, JSON.stringify(device.state(), null, 2) + '\n', { mode: 0o600 });
}

async function pushNamed(device: Authenticator, pushId: string | undefined): Promise<Push> {
  if (!pushId) throw new Error('name the request: gatehouse-authenticator pushes lists them');
  const push = (await device.pushes()).find((p) => p.pushId === pushId);
  if (!push) throw new Error(`no pending request ${pushId}`);
  return push;
}

/** What the user supplies to complete the method: the number, the pattern or the photo. */
function proofOptions() {
  const photo = values.photo;
  return {
    ...(values.number !== undefined ? { passCode: values.number } : {}),
    ...(values.pattern !== undefined ? { passCode: values.pattern } : {}),
    ...(photo
      ? {
          photo: {
            bytes: readFileSync(photo),
            type: /\.png$/i.test(photo) ? ('image/png' as const) : ('image/jpeg' as const),
          },
        }
      : {}),
  };
}

async function main(): Promise<void> {
  if (values.help || !command) {
    process.stdout.write(USAGE);
    return;
  }
  switch (command) {
    case 'bind': {
      if (!argument) throw new Error('bind needs the binding link: gatehouse-authenticator bind <binding_url>');
      const alg = values.alg ?? 'ES256';
      if (alg !== 'ES256' && alg !== 'EdDSA') throw new Error('--alg is ES256 or EdDSA');
      const device = await Authenticator.create({
        alg,
        biometric: values.biometric ?? false,
        ...(values.name ? { name: values.name } : {}),
        ...(values['client-id'] ? { clientId: values['client-id'] } : {}),
        ...(values.server ? { server: values.server } : {}),
      });
      const bound = await device.bind(argument);
      save(device);
      console.log(`bound device ${bound.device_id} to user ${bound.sub} (state: ${stateFile})`);
      return;
    }
    case 'pushes': {
      const pushes = await load().pushes();
      const now = new Date();
      console.log(pushes.length ? pushes.map((p) => describePush(p, now)).join('\n') : 'no pending requests');
      return;
    }
    case 'ack': {
      const device = load();
      const { context } = await device.acknowledge(await pushNamed(device, argument));
      console.log(JSON.stringify(context, null, 2));
      return;
    }
    case 'allow': {
      const device = load();
      const { numberDigits } = await device.allow(await pushNamed(device, argument));
      console.log(
        numberDigits === null
          ? 'allowed'
          : `allowed: now type the ${numberDigits}-digit number the sign-in page shows (verify ${argument} --number N)`,
      );
      return;
    }
    case 'verify':
    case 'approve': {
      const device = load();
      const push = await pushNamed(device, argument);
      const done =
        command === 'approve' ? await device.approve(push, proofOptions()) : await device.verify(push, proofOptions());
      console.log(`signed in: ${done.sub} (status ${done.status_id})`);
      return;
    }
    case 'deny': {
      const device = load();
      await device.deny(await pushNamed(device, argument), values.reason);
      console.log('denied');
      return;
    }
    case 'cancel': {
      const device = load();
      await device.cancel(await pushNamed(device, argument));
      console.log('cancelled');
      return;
    }
    default:
      throw new Error(`unknown command "${command}"\n\n${USAGE}`);
  }
}

main().catch((err: unknown) => {
  const message = err instanceof DeviceCallError || err instanceof Error ? err.message : String(err);
  console.error(`gatehouse-authenticator: ${message}`);
  process.exitCode = 1;
});
