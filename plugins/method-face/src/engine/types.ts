export interface FaceEngineOptions {
  /** Images wider or taller than this are refused from their header, before decoding (default 4096). */
  maxSide?: number;
  /** Images with more pixels than this are refused from their header, before decoding (default 16 M). */
  maxPixels?: number;
  /** Images that may wait behind the one being described; more are refused at once (default 16). */
  maxQueue?: number;
  /** A describe that takes longer ends the worker, and the next image starts a new one (default 30 s). */
  timeoutMs?: number;
}

export type ResolvedOptions = Required<FaceEngineOptions>;

/** What the worker needs: the limits checked before decoding. */
export type ImageLimits = Pick<ResolvedOptions, 'maxSide' | 'maxPixels'>;

export type RefusalReason = 'bad_image' | 'too_large' | 'no_face' | 'several_faces';

/** A 1024-number face descriptor (length 1) of the image's only face, or why the image gave none. */
export type DescribeResult = { ok: true; descriptor: number[] } | { ok: false; reason: RefusalReason };

/**
 * The pipeline that makes descriptors: stored with each one, so that descriptors of another
 * pipeline (another model, detector or averaging) are never compared with these.
 */
export const DESCRIPTOR_VERSION = 'human@3.3.6/blazeface/faceres/unit';

export const DEFAULTS: ResolvedOptions = {
  maxSide: 4096,
  maxPixels: 16_000_000,
  maxQueue: 16,
  timeoutMs: 30_000,
};

export function resolveOptions(options: FaceEngineOptions = {}): ResolvedOptions {
  const resolved = { ...DEFAULTS, ...options };
  for (const [key, value] of Object.entries(resolved)) {
    const least = key === 'maxQueue' ? 0 : 1;
    if (!Number.isSafeInteger(value) || value < least)
      throw new Error(`face engine option ${key} must be an integer of at least ${least}`);
  }
  return resolved;
}

/** Main thread → worker: one image to describe. */
export interface DescribeRequest {
  id: number;
  image: Uint8Array;
}

/** Worker → main thread. */
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'result'; id: number; result: DescribeResult }
  | { type: 'failed'; id: number; message: string };
