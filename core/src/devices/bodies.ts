import { routeInput, type RouteSpec } from '@gatehouse-auth/plugin-api';
import { z, type ZodType } from 'zod';
import { verificationError } from '../verification/errors.js';
import { keyAlgorithm } from './proof.js';

/**
 * The bodies of the device API's calls (docs/devices.md), checked by the core's operations
 * (`web.devices`, decision 69) whatever the plugin serving the routes checked, and exported for
 * that plugin's declarations (the OpenAPI document). The device signs each call over its body
 * (Device-Proof), so the checks transform nothing: the body goes on as it came.
 */

export const BINDING_CODE = /^[A-Za-z0-9_-]{16,128}$/;

const text = (re: RegExp, description: string) => z.string().regex(re).meta({ description });
/** Device fields as forms and JSON send them (numbers are read as text). */
const value = z.union([z.string(), z.number()]).optional();
const deviceFields = { device_id: value, client_id: value, push_id: value };

export const DEVICE_BODIES = {
  bind: z
    .object({
      code: text(BINDING_CODE, 'the binding code from the QR code link'),
      device_id: text(/^[A-Za-z0-9._-]{8,128}$/, 'the app’s id for this device'),
      client_id: text(/^[A-Za-z0-9._:-]{1,128}$/, 'the authenticator app'),
      name: text(/^\S.{0,63}$/su, 'what the user calls the device'),
      public_key: z
        .record(z.string(), z.unknown())
        .refine((k) => keyAlgorithm(k) !== null)
        .meta({ description: 'a public EC P-256 or Ed25519 JWK' }),
      biometric: z.boolean().optional().meta({ description: 'the key needs a biometric unlock' }),
      push_token: text(/^[\x21-\x7e]{1,4096}$/, 'where the push provider reaches the app').optional(),
    })
    .loose(),
  inbox: z.object(deviceFields).loose(),
  pushStep: z
    .object({
      exchange_id: value,
      ...deviceFields,
      pass_code: value.meta({
        description: 'the number the user typed: the one the sign-in page shows (number matching)',
      }),
      reason: value,
    })
    .loose(),
  rename: z.object({ name: z.string().trim().min(1).max(64) }),
};

/** A binding's body as the schema checked it (it transforms nothing: the same object as it came). */
export type BindBody = z.output<typeof DEVICE_BODIES.bind>;

/** Each field's own message, as the binding always answered. */
function bindInvalid(_message: string, names: string[]) {
  const name = names[0]!.split('.')[0]!;
  const message =
    name === 'public_key'
      ? 'public_key must be a public EC P-256 or Ed25519 JWK'
      : name === 'biometric'
        ? 'biometric must be true or false'
        : `${name} is missing or not valid`;
  return verificationError('INVALID_FIELD', message, { fields: [name] });
}

const INVALID: Record<keyof typeof DEVICE_BODIES, (message: string, fields: string[]) => Error> = {
  bind: bindInvalid,
  inbox: (message, fields) => verificationError('INVALID_FIELD', message, { fields }),
  pushStep: (message, fields) => verificationError('INVALID_FIELD', message, { fields }),
  rename: () => verificationError('INVALID_FIELD', 'name must be 1 to 64 characters', { fields: ['name'] }),
};

/** The body checked against its schema (400 INVALID_FIELD naming the field): what the schema answers. */
export function deviceBody<K extends keyof typeof DEVICE_BODIES>(
  kind: K,
  body: unknown,
): z.output<(typeof DEVICE_BODIES)[K]> {
  const route = { body: DEVICE_BODIES[kind] as ZodType, invalid: INVALID[kind] } as RouteSpec;
  return routeInput(route, { body }).body as z.output<(typeof DEVICE_BODIES)[K]>;
}
