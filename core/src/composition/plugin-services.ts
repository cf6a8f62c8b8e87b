import { REPLACEABLE_SERVICES, type OutboundMessage, type Services } from '@gatehouse-auth/plugin-api';
import { boundDevice } from '../devices/pushes.js';
import { asValue, type AwilixContainer } from 'awilix';
import { BootError } from '../errors.js';
import { DELIVERY_JOB, deliveryJob, toPayload, type QueuedDelivery } from '../jobs/delivery.js';
import type { JobHandler } from '../jobs/queue.js';
import { signJwt } from '../oauth/jws.js';
import type { Extensions } from '../plugins/loader.js';
import { cryptoHelpers, heavyWorkLoad, httpHelpers, runHeavy } from '../services.js';
import { credentialStore } from '../storage/stores.js';
import type { Cradle } from './cradle.js';

function checkedChannel(extensions: Extensions, id: string, message: OutboundMessage) {
  const channel = extensions.channels.get(id);
  if (!channel) throw new Error(`no delivery channel "${id}" is registered`);
  if (!channel.kinds.includes(message.kind)) throw new Error(`delivery channel "${id}" does not send ${message.kind}`);
  return channel;
}

/** What a delivery is counted and traced with. */
type Observed = Pick<Cradle, 'metrics' | 'tracing'>;

/**
 * Sends through a registered channel that carries this kind of message; each attempt is
 * counted by channel, kind and outcome, and traced (channel and kind only: never the recipient).
 */
function deliverWith(extensions: Extensions, { metrics, tracing }: Observed) {
  return async (id: string, message: OutboundMessage) => {
    const channel = checkedChannel(extensions, id, message);
    const attributes = { 'gatehouse.channel': channel.id, 'gatehouse.message.kind': message.kind };
    try {
      await tracing.span('delivery.send', attributes, () => channel.send(message));
    } catch (err) {
      metrics.delivery(channel.id, message.kind, 'failed');
      throw err;
    }
    metrics.delivery(channel.id, message.kind, 'sent');
  };
}

/** The background job that sends queued messages through the registered channels. */
export function queuedDeliveries(extensions: Extensions, observed: Observed): JobHandler {
  return deliveryJob(deliverWith(extensions, observed));
}

/**
 * What plugins get as `api.services`. The replaceable services (`userDirectory`,
 * `passwordHashing`) and those plugins provide are read from the container at each use, so a
 * replacement registered by a plugin is what everyone uses.
 */
export function makeServices(container: AwilixContainer<Cradle>, provided: ReadonlyMap<string, string>): Services {
  const { clock, secretBox, sql, events, extensions, jobs } = container.cradle;
  return {
    clock,
    secrets: {
      encrypt: (p) => secretBox.encrypt(p),
      decrypt: (s) => secretBox.decrypt(s),
      mac: (v) => secretBox.mac(v),
    },
    crypto: cryptoHelpers,
    get users() {
      return container.cradle.userDirectory;
    },
    get passwordHashing() {
      return container.cradle.passwordHashing;
    },
    get accountStore() {
      return container.cradle.accountStore;
    },
    get appStore() {
      return container.cradle.storedClients;
    },
    resolve: <T>(name: string): T => {
      // Only services meant for plugins: never the core's own (sql, secretBox…).
      if (!provided.has(name) && !Object.hasOwn(REPLACEABLE_SERVICES, name))
        throw new Error(`no service "${name}" is provided`);
      return container.resolve<T>(name as keyof Cradle & string);
    },
    credentials: (userId, method) => credentialStore(sql, clock, userId, method),
    events,
    history: events,
    channels: {
      get: (id) => extensions.channels.get(id),
      ids: () => extensions.channels.ids(),
      deliver: deliverWith(extensions, container.cradle),
      enqueue: async (id, message, opts) => {
        checkedChannel(extensions, id, message);
        const job: QueuedDelivery = {
          channel: id,
          message,
          ...(opts.secrets ? { secrets: opts.secrets } : {}),
          ...(opts.about ? { about: opts.about } : {}),
        };
        await jobs.enqueue({ kind: DELIVERY_JOB, payload: toPayload(job), expiresAt: opts.expiresAt });
      },
    },
    heavy: runHeavy,
    http: httpHelpers,
    accounts: {
      verified: (user, medium) => container.cradle.accounts.verified(user, medium),
      markVerified: (userId, medium, address) => container.cradle.accounts.markVerified(userId, medium, address),
    },
    stats: {
      dialect: sql.dialect,
      database: () => sql.driver.stats(),
      hashing: heavyWorkLoad,
      jobsRunning: () => jobs.runningJobs,
      dependencies: () => container.cradle.dependencies.states(),
    },
    async signJwt(typ, claims, alg) {
      // Never the core's own kinds: an ID token (`JWT`, or none) or an access token (`at+jwt`).
      if (!/^[\w.-]+\+jwt$/i.test(typ) || /^at\+jwt$/i.test(typ))
        throw new Error(`signJwt: typ "${typ}" is not one a plugin may sign (<kind>+jwt, not at+jwt)`);
      const { keys, config } = container.cradle;
      return signJwt(await keys.signer(alg), { typ }, { ...claims, iss: config.issuer });
    },
    devices: {
      startBinding: (user, opts) => container.cradle.deviceBinding.start(user, opts),
      ofUser: async (userId, opts) =>
        (await container.cradle.devices.ofUser(userId)).filter((d) => !opts?.biometric || d.biometric).map(boundDevice),
    },
  };
}

/**
 * Registers a service a plugin provides (`api.provide`): a new name, or a replacement of a
 * replaceable core service. One provider per name; the core's own services stay the core's.
 */
export function provideService(container: AwilixContainer<Cradle>, provided: Map<string, string>) {
  return (name: string, service: unknown, owner: string): void => {
    const first = provided.get(name);
    if (first) {
      throw new BootError(
        'PLUGIN_DUPLICATE_ID',
        `plugin ${owner}: service "${name}" is already provided by plugin ${first}`,
      );
    }
    if (Object.hasOwn(container.registrations, name) && !Object.hasOwn(REPLACEABLE_SERVICES, name)) {
      throw new BootError('PLUGIN_INVALID', `plugin ${owner}: "${name}" is a core service a plugin may not replace`);
    }
    provided.set(name, owner);
    container.register({ [name]: asValue(service) } as never);
  };
}
