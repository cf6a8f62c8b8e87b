/**
 * Methods an authenticator device completes (docs/devices.md): PUSH, PATTERN, TOUCHID, FACE.
 * The core runs the push itself (the device, its signed steps, the number); a method plugin
 * supplies what differs: its id, its `amr`, whether it needs a biometric unlock, and the check
 * of what the device sends (a pattern, a photo) once the core checked the device.
 */
import type {
  AuthMethod,
  BoundDevice,
  EnrollmentHandlers,
  InitiateContext,
  InitiateOutcome,
  MethodContext,
  VerifyContext,
  VerifyOutcome,
} from './extensions.js';
import type { PluginApi } from './api.js';
import type { Services } from './services.js';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** Options every device method accepts in its plugin config. */
export const deviceMethodOptions = z.strictObject({
  /**
   * A delivery channel that carries `push` messages (the webhook to a push provider; the outbox
   * in development): it wakes devices that gave a push token. Without it devices poll their inbox.
   */
  channel: z.string().min(1).optional(),
});
export type DeviceMethodOptions = z.infer<typeof deviceMethodOptions>;

/** The fields every device verification carries besides `exchange_id` (the spec's matrix). */
export const DEVICE_FIELDS = ['push_id', 'device_id', 'client_id'];

/**
 * Since 1.3: the device API's paths (docs/devices.md), the device protocol: the core checks
 * proofs against them (`htu`) and builds the binding link with `bindingLink`; the plugin that
 * serves the device API (@gatehouse-auth/devices-api) answers there.
 */
export const DEVICE_API_PATHS = {
  bind: '/verification-srv/devices/bind',
  inbox: '/verification-srv/devices/pushes',
  pushStep: '/verification-srv/authentication/:method/push/:step',
  /** The verification a device signs (its proof's `htu`), served by @gatehouse-auth/verification-api. */
  verify: '/verification-srv/authentication/:method/verification',
  devices: '/verification-actions-srv/setup/users/:sub/devices',
  bindingLink: '/devices/bind',
} as const;

/** Since 1.3: a device's steps on a push (docs/devices.md, "The steps of a push"). */
export const PUSH_STEP_NAMES = ['acknowledge', 'allow', 'deny', 'cancel'] as const;

/** The login page's side of every device method: the number, then waiting on the status. */
export const DEVICE_PAGE_MODULE = fileURLToPath(new URL('../assets/device-page.js', import.meta.url));

/** What a device method plugin supplies to `deviceMethod`. */
export interface DeviceMethodDefinition {
  /** Method id, upper case: the path segment. */
  id: string;
  /** RFC 8176 values, e.g. ['swk', 'mca'] (a software key, plus what the device checked). */
  amr: string[];
  /** The method's name for users, and a line of help on the login page. */
  page: { label: string; help?: string };
  /** The login page shows a number the user types on the device (sent as `pass_code`). */
  numberMatching?: boolean;
  /** Only devices whose key is bound to a biometric unlock, with proofs that claim it. */
  userVerification?: boolean;
  /** May complete a login alone where the app allows it (`single_factor_auth`). */
  singleFactor?: boolean;
  /** Fields besides exchange_id, push_id, device_id and client_id (PUSH, PATTERN: `pass_code`). */
  extraFields?: string[];
  /** Multipart file parts of the verification (FACE: `photo`). */
  files?: AuthMethod['files'];
  /** Whether this device of the user can do the method (PATTERN: it holds a pattern). Default: yes. */
  acceptsDevice?(ctx: MethodContext, device: BoundDevice): Promise<boolean>;
  /** Whether the user set the method up. Default: they have a device the method can use. */
  isEnrolled?(ctx: MethodContext): Promise<boolean>;
  /** Setting the method up. Default: binding a device (the setup API answers its QR code). */
  enrollment?: EnrollmentHandlers;
  /** Extra work when a push starts (state for `verify`). Default: none. */
  initiate?(ctx: InitiateContext): Promise<InitiateOutcome>;
  /**
   * The method's own check, after the core checked the device: the push, the signed proof over
   * this very request, the biometric unlock where required, and the number. Default: none left.
   */
  verify?(ctx: VerifyContext): Promise<VerifyOutcome>;
}

/** Setup by binding a device: the setup API's initiation answers the code, link and QR code. */
export function deviceBindingEnrollment(services: Services, opts: { biometric: boolean }): EnrollmentHandlers {
  return {
    async initiate(ctx) {
      const response = await services.devices.startBinding(ctx.user, opts);
      return { ok: true, done: true, pending: null, response };
    },
  };
}

/**
 * Builds a device method. The core picks the device (the one named by `medium_id`, else the
 * one used last), starts the push and checks the device's proof; this object adds the method's
 * fields, page and enrollment.
 */
export function deviceMethod(
  def: DeviceMethodDefinition,
  services: Services,
  options: DeviceMethodOptions,
): AuthMethod {
  const biometric = def.userVerification === true;
  return {
    id: def.id,
    amr: def.amr,
    verifyFields: [...DEVICE_FIELDS, ...(def.extraFields ?? [])],
    ...(def.files ? { files: def.files } : {}),
    ...(def.singleFactor ? { singleFactor: true } : {}),
    device: {
      ...(def.numberMatching ? { numberMatching: true } : {}),
      ...(biometric ? { userVerification: true } : {}),
      ...(options.channel ? { channel: options.channel } : {}),
      ...(def.acceptsDevice ? { accepts: def.acceptsDevice } : {}),
    },
    page: {
      label: def.page.label,
      ...(def.page.help ? { help: def.page.help } : {}),
      inputs: [],
      module: DEVICE_PAGE_MODULE,
    },
    isEnrolled:
      def.isEnrolled ?? (async (ctx) => (await services.devices.ofUser(ctx.user.id, { biometric })).length > 0),
    initiate: def.initiate ?? (async () => ({ ok: true })),
    verify: def.verify ?? (async () => ({ ok: true })),
    enrollment: def.enrollment ?? deviceBindingEnrollment(services, { biometric }),
  };
}

/**
 * Adds a device method, with a start-up check that `options.channel` (when set) names a
 * registered channel that carries push messages.
 *
 * @example
 * register(api, options) {
 *   addDeviceMethod(api, { id: 'PUSH', amr: ['swk', 'mca'], numberMatching: true, extraFields: ['pass_code'], page }, options);
 * }
 */
export function addDeviceMethod(api: PluginApi, def: DeviceMethodDefinition, options: DeviceMethodOptions): void {
  api.methods.add(deviceMethod(def, api.services, options));
  const channelId = options.channel;
  if (!channelId) return;
  api.check(() => {
    const channel = api.services.channels.get(channelId);
    const known = () => api.services.channels.ids().join(', ') || 'none';
    if (!channel)
      throw new Error(`options.channel: no delivery channel "${channelId}" is registered (known: ${known()})`);
    if (!channel.kinds.includes('push'))
      throw new Error(`options.channel: delivery channel "${channelId}" does not send push messages`);
  });
}
