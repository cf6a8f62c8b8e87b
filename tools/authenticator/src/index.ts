/**
 * @gatehouse-auth/authenticator — an authenticator device for Gatehouse's device API
 * (docs/devices.md), as a library; the `gatehouse-authenticator` command wraps it.
 */
export { Authenticator, DeviceCallError } from './authenticator.js';
export type { CreateOptions, DeviceState, Photo, Push } from './authenticator.js';
export { absoluteTime, describePush, relativeTime } from './describe.js';
export { canonicalBody, deviceProof } from './proof.js';
export type { DeviceAlg, FilePart, ProofInput } from './proof.js';
