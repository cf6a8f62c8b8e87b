import { defineRoute, type ErrorRef, type RouteSpec } from '@gatehouse-auth/plugin-api';
import { z } from 'zod';
import { ADMIN_THROTTLED } from '../http/admin-guard.js';
import { verificationError } from '../verification/errors.js';
import { keyAlgorithm } from './proof.js';
import { PUSH_STEPS } from './pushes.js';

/**
 * The device API's operations (docs/devices.md, decision 26). The device signs each call over
 * its body (Device-Proof), so the handlers check the body against these schemas and pass on the
 * body as it came.
 */

export const BIND_PATH = '/verification-srv/devices/bind';
export const INBOX_PATH = '/verification-srv/devices/pushes';
export const DEVICES_PATH = '/verification-actions-srv/setup/users/:sub/devices';

export const BINDING_CODE = /^[A-Za-z0-9_-]{16,128}$/;
const DEVICE_ID = /^[A-Za-z0-9._-]{8,128}$/;
const DEVICE_CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const invalid = (message: string, names: string[]) => verificationError('INVALID_FIELD', message, { fields: names });
const text = (re: RegExp, description: string) => z.string().regex(re).meta({ description });
const SETUP_ACCESS: readonly ErrorRef[] = [
  'UNAUTHORIZED',
  'INSUFFICIENT_SCOPE',
  'REAUTHENTICATION_REQUIRED',
  'FIELD_MISSING',
  'USER_NOT_FOUND',
  ADMIN_THROTTLED,
];
const json = z.record(z.string(), z.unknown());

/** Each field's own message, as the binding always answered. */
const bindInvalid = (_message: string, names: string[]) => {
  const name = names[0]!.split('.')[0]!;
  const message =
    name === 'public_key'
      ? 'public_key must be a public EC P-256 or Ed25519 JWK'
      : name === 'biometric'
        ? 'biometric must be true or false'
        : `${name} is missing or not valid`;
  return verificationError('INVALID_FIELD', message, { fields: [name] });
};

/** Device fields as forms and JSON send them (numbers are read as text). */
const value = z.union([z.string(), z.number()]).optional();
const deviceFields = { device_id: value, client_id: value, push_id: value };

export const DEVICE_API = {
  bind: defineRoute({
    id: 'bindDevice',
    method: 'post',
    path: BIND_PATH,
    tag: 'devices',
    summary: 'Bind an authenticator app to the user with the code from the QR code',
    description: 'The body is signed with the new key (Device-Proof, the code as its nonce).',
    security: ['deviceProof'],
    body: z
      .object({
        code: text(BINDING_CODE, 'the binding code from the QR code link'),
        device_id: text(DEVICE_ID, 'the app’s id for this device'),
        client_id: text(DEVICE_CLIENT_ID, 'the authenticator app'),
        name: text(/^\S.{0,63}$/su, 'what the user calls the device'),
        public_key: z
          .record(z.string(), z.unknown())
          .refine((k) => keyAlgorithm(k) !== null)
          .meta({ description: 'a public EC P-256 or Ed25519 JWK' }),
        biometric: z.boolean().optional().meta({ description: 'the key needs a biometric unlock' }),
        push_token: text(/^[\x21-\x7e]{1,4096}$/, 'where the push provider reaches the app').optional(),
      })
      .loose(),
    invalid: bindInvalid,
    response: { description: 'the bound device', schema: json },
    errors: ['INVALID_FIELD', 'BINDING_INVALID', 'BINDING_EXPIRED', 'DEVICE_PROOF_INVALID', 'DEVICE_EXISTS'],
  }),
  inbox: defineRoute({
    id: 'devicePushes',
    method: 'post',
    path: INBOX_PATH,
    tag: 'devices',
    summary: 'The pushes waiting for this device',
    security: ['deviceProof'],
    body: z.object(deviceFields).loose(),
    invalid,
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
    path: '/verification-srv/authentication/:method/push/:step',
    tag: 'devices',
    summary: 'The device’s answer to a push: acknowledge, allow, deny or cancel',
    security: ['deviceProof'],
    params: z.object({ method: z.string(), step: z.enum(Object.keys(PUSH_STEPS) as [keyof typeof PUSH_STEPS]) }),
    body: z
      .object({
        exchange_id: value,
        ...deviceFields,
        pass_code: value.meta({
          description: 'the number the user typed: the one the sign-in page shows (number matching)',
        }),
        reason: value,
      })
      .loose(),
    invalid,
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
  list: defineRoute({
    id: 'listDevices',
    method: 'get',
    path: DEVICES_PATH,
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
    path: `${DEVICES_PATH}/:deviceId`,
    tag: 'devices',
    summary: 'Rename a device',
    security: ['adminToken', 'accessToken'],
    params: z.object({ sub: z.string(), deviceId: z.string() }),
    body: z.object({ name: z.string().trim().min(1).max(64) }),
    invalid: () => verificationError('INVALID_FIELD', 'name must be 1 to 64 characters', { fields: ['name'] }),
    response: { description: 'renamed', schema: z.object({ device_id: z.string(), name: z.string() }) },
    errors: [...SETUP_ACCESS, 'INVALID_FIELD', 'DEVICE_NOT_FOUND'],
  }),
  remove: defineRoute({
    id: 'removeDevice',
    method: 'delete',
    path: `${DEVICES_PATH}/:deviceId`,
    tag: 'devices',
    summary: 'Remove a device: its pushes end, and the user’s sessions and tokens with it',
    security: ['adminToken', 'accessToken'],
    params: z.object({ sub: z.string(), deviceId: z.string() }),
    response: { description: 'removed', schema: z.object({ removed: z.literal(true) }) },
    errors: [...SETUP_ACCESS, 'DEVICE_NOT_FOUND'],
  }),
} satisfies Record<string, RouteSpec>;

/** A binding's body as the schema checked it (it transforms nothing: the same object as it came). */
export type BindBody = z.output<NonNullable<typeof DEVICE_API.bind.body>>;
