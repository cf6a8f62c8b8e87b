import {
  DEVICE_API_PATHS,
  DEVICE_BODIES,
  PUSH_STEP_NAMES,
  VERIFICATION_ROUTE_PARTS,
  defineRoute,
  z,
  type RouteSpec,
} from '@gatehouse-auth/core';

/** What `web.setup.access` refuses with: the core's own list, as the setup API's routes use. */
const SETUP_ACCESS = VERIFICATION_ROUTE_PARTS.setupAccessErrors;

/**
 * The device API's operations (docs/devices.md, decision 26), under the plugin's mounts. The
 * bodies are the core's (`DEVICE_BODIES`): `web.devices` checks them whatever a route did.
 */

/** Where the device's own calls are mounted: binding, the inbox and the push steps. */
export const DEVICE_MOUNT = '/verification-srv';
/** Where the setup API's device calls are mounted: `/{sub}/devices…`. */
export const SETUP_MOUNT = '/verification-actions-srv/setup/users';

/** A path of the device protocol (the core checks proofs against it) under its mount. */
const under = (mount: string, path: string) => {
  if (!path.startsWith(`${mount}/`)) throw new Error(`${path} is not under ${mount}`);
  return path.slice(mount.length);
};

const json = z.record(z.string(), z.unknown());

export const DEVICE_API = {
  bind: defineRoute({
    id: 'bindDevice',
    method: 'post',
    path: under(DEVICE_MOUNT, DEVICE_API_PATHS.bind),
    tag: 'devices',
    summary: 'Bind an authenticator app to the user with the code from the QR code',
    description: 'The body is signed with the new key (Device-Proof, the code as its nonce).',
    security: ['deviceProof'],
    body: DEVICE_BODIES.bind,
    response: { description: 'the bound device', schema: json },
    errors: ['INVALID_FIELD', 'BINDING_INVALID', 'BINDING_EXPIRED', 'DEVICE_PROOF_INVALID', 'DEVICE_EXISTS'],
  }),
  inbox: defineRoute({
    id: 'devicePushes',
    method: 'post',
    path: under(DEVICE_MOUNT, DEVICE_API_PATHS.inbox),
    tag: 'devices',
    summary: 'The pushes waiting for this device',
    security: ['deviceProof'],
    body: DEVICE_BODIES.inbox,
    response: {
      description:
        'the pushes whose login still waits on them (not those of a login that ended or went on), oldest first, each with context.requested_at',
      schema: z.object({ pushes: z.array(json) }),
    },
    errors: ['INVALID_FIELD', 'DEVICE_NOT_FOUND', 'DEVICE_MISMATCH', 'DEVICE_PROOF_INVALID'],
  }),
  pushStep: defineRoute({
    id: 'pushStep',
    method: 'post',
    path: under(DEVICE_MOUNT, DEVICE_API_PATHS.pushStep),
    tag: 'devices',
    summary: 'The device’s answer to a push: acknowledge, allow, deny or cancel',
    security: ['deviceProof'],
    params: z.object({ method: z.string(), step: z.enum(PUSH_STEP_NAMES) }),
    body: DEVICE_BODIES.pushStep,
    response: { description: 'the push’s new state', schema: json },
    errors: [
      'INVALID_FIELD',
      { code: 'NOT_FOUND', status: 404, description: 'no such step (acknowledge, allow, deny or cancel)' },
      'METHOD_NOT_FOUND',
      'EXCHANGE_INVALID',
      { code: 'EXCHANGE_INVALID', status: 404, description: 'no such exchange_id' },
      'EXCHANGE_USED',
      'EXCHANGE_EXPIRED',
      'DEVICE_NOT_FOUND',
      'DEVICE_MISMATCH',
      'DEVICE_PROOF_INVALID',
      'PUSH_STATE',
      'PUSH_NOT_ALLOWED',
      { code: 'WRONG_FLOW_STAGE', status: 400, description: 'the push’s login is over or went on to another stage' },
    ],
  }),
} satisfies Record<string, RouteSpec>;

export const SETUP_DEVICE_API = {
  list: defineRoute({
    id: 'listDevices',
    method: 'get',
    path: under(SETUP_MOUNT, DEVICE_API_PATHS.devices),
    tag: 'devices',
    summary: 'The user’s bound devices',
    security: ['adminToken', 'accessToken'],
    params: z.object({ sub: z.string() }),
    response: {
      description: 'the devices',
      schema: z.array(
        z.object({
          device_id: z.string(),
          name: z.string(),
          client_id: z.string(),
          biometric: z.boolean(),
          alg: z.string(),
          created_at: z.string(),
          last_used_at: z.string().nullable(),
        }),
      ),
    },
    errors: SETUP_ACCESS,
  }),
  rename: defineRoute({
    id: 'renameDevice',
    method: 'patch',
    path: `${under(SETUP_MOUNT, DEVICE_API_PATHS.devices)}/:deviceId`,
    tag: 'devices',
    summary: 'Rename a device',
    security: ['adminToken', 'accessToken'],
    params: z.object({ sub: z.string(), deviceId: z.string() }),
    body: DEVICE_BODIES.rename,
    response: { description: 'renamed', schema: z.object({ device_id: z.string(), name: z.string() }) },
    errors: [...SETUP_ACCESS, 'INVALID_FIELD', 'DEVICE_NOT_FOUND'],
  }),
  remove: defineRoute({
    id: 'removeDevice',
    method: 'delete',
    path: `${under(SETUP_MOUNT, DEVICE_API_PATHS.devices)}/:deviceId`,
    tag: 'devices',
    summary: 'Remove a device: its pushes end, and the user’s sessions and tokens with it',
    security: ['adminToken', 'accessToken'],
    params: z.object({ sub: z.string(), deviceId: z.string() }),
    response: { description: 'removed', schema: z.object({ removed: z.literal(true) }) },
    errors: [...SETUP_ACCESS, 'DEVICE_NOT_FOUND'],
  }),
} satisfies Record<string, RouteSpec>;
