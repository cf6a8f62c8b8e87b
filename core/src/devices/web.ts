import { DEVICE_API_PATHS, type AccountStore, type DevicesApi, type UserRecord } from '@gatehouse-auth/plugin-api';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.js';
import { requestFacts, stringFields } from '../verification/context.js';
import { verificationError } from '../verification/errors.js';
import type { VerificationService } from '../verification/service.js';
import type { DeviceBinding } from './binding.js';
import { deviceBody } from './bodies.js';
import { PROOF_HEADER } from './proof.js';
import { PUSH_STEPS, type DevicePushes, type PushStep } from './pushes.js';
import { publicDevice, type DeviceStore } from './store.js';

export interface DevicesWebDeps {
  issuerPath: string;
  devices: DeviceStore;
  deviceBinding: DeviceBinding;
  pushes: DevicePushes;
  verification: VerificationService;
  accountStore: AccountStore;
}

/**
 * The device API's operations (`web.devices`, decision 69) for the plugin that serves its routes:
 * every check is here, so a plugin cannot skip one. The proof must name the path of the
 * operation run here (the issuer's path first), not whatever path the plugin was called on: a
 * proof for one step never does another.
 */
export class DevicesWeb implements DevicesApi {
  constructor(private readonly deps: DevicesWebDeps) {}

  /** A device's request: its fields, its proof and the public path the proof must name. */
  private request(req: IncomingMessage, body: unknown, path: string) {
    const proof = req.headers[PROOF_HEADER];
    return {
      fields: stringFields(body).fields,
      files: [],
      proof: typeof proof === 'string' ? proof : undefined,
      path: this.deps.issuerPath + path,
      request: requestFacts(req),
    };
  }

  async bind(req: IncomingMessage, body: unknown) {
    const checked = deviceBody('bind', body);
    const { proof, path, request } = this.request(req, body, DEVICE_API_PATHS.bind);
    return this.deps.deviceBinding.complete(checked, proof, path, request);
  }

  async inbox(req: IncomingMessage, body: unknown) {
    deviceBody('inbox', body);
    return this.deps.pushes.inbox(this.request(req, body, DEVICE_API_PATHS.inbox));
  }

  async pushStep(req: IncomingMessage, method: string, step: string, body: unknown) {
    if (!Object.hasOwn(PUSH_STEPS, step)) throw new ApiError(404, 'NOT_FOUND', 'no such endpoint');
    deviceBody('pushStep', body);
    const path = DEVICE_API_PATHS.pushStep.replace(':method', method).replace(':step', step);
    const request = { ...this.request(req, body, path), keys: stringFields(body).keys, logger: req.log };
    return this.deps.verification.pushStep(method, step as PushStep, request);
  }

  bindingLink(code: unknown) {
    return this.deps.deviceBinding.linkOf(code);
  }

  async list(user: UserRecord) {
    return (await this.deps.devices.ofUser(user.id)).map(publicDevice);
  }

  async rename(user: UserRecord, deviceId: string, body: unknown) {
    const { name } = deviceBody('rename', body);
    if (!(await this.deps.devices.rename(user.id, deviceId, name))) throw verificationError('DEVICE_NOT_FOUND');
    return { device_id: deviceId, name };
  }

  async remove(user: UserRecord, deviceId: string) {
    // Its pushes end (the login pages waiting on them learn it), and, as for any removed sign-in
    // method, the user's sessions and tokens end with it.
    if (!(await this.deps.accountStore.removeDevice(user.id, deviceId))) throw verificationError('DEVICE_NOT_FOUND');
  }
}
