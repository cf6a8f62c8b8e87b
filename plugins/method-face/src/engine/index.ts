export { FaceEngine, FaceEngineBusyError, type FaceEngineStats } from './face-engine.js';
export { closeSharedFaceEngine, sharedFaceEngine } from './shared.js';
export { faceDistance } from './distance.js';
export {
  DEFAULTS,
  DESCRIPTOR_VERSION,
  type DescribeResult,
  type FaceEngineOptions,
  type RefusalReason,
} from './types.js';
