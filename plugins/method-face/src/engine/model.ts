import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Config, Human } from '@vladmandic/human';
import * as tf from '@tensorflow/tfjs-core';
import type { RgbImage } from './decode.js';
import type { DescribeResult } from './types.js';

export interface FaceModel {
  /** Finds every face; a descriptor only when there is exactly one. */
  describe(image: RgbImage): Promise<DescribeResult>;
}

const require = createRequire(import.meta.url);
/** human's exports map reaches only dist/human.node.js (which needs tfjs-node): found from it. */
const HUMAN_DIR = path.dirname(path.dirname(require.resolve('@vladmandic/human')));
/**
 * The WASM build: it requires tfjs-core, tfjs-converter and tfjs-backend-wasm, the instances
 * imported here too (one tfjs per worker); the main entry needs @tensorflow/tfjs-node.
 */
const { Human: HumanClass } = require(path.join(HUMAN_DIR, 'dist', 'human.node-wasm.js')) as {
  Human: new (config: Partial<Config>) => Human;
};

/** The weights ship inside the human package: loading them reads files, never the network. */
const MODEL_DIR = `${pathToFileURL(path.join(HUMAN_DIR, 'models')).href}/`;
/** The backend's .wasm files, read from disk too. */
const WASM_DIR = `${path.join(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist')}/`;

/**
 * Longer side of the image the networks see. BlazeFace sees 256 × 256 and faceres a chip of the
 * face whatever the photo's size, so a larger photo only costs time and memory.
 */
const WORK_SIDE = 1024;

/**
 * BlazeFace and faceres only, with every cache off: each photo is a different request (maybe of
 * another user), so nothing of the last one may be reused. maxDetected is 2: enough to see that
 * a photo shows several people, and faceres then runs at most twice however many there are. On
 * face-api's six sample collages BlazeFace (minConfidence 0.4, maxDetected 10) found 3, 3, 3, 4,
 * 5 and 4 faces, all 22 that SSD found; with maxDetected 2 each is still refused as several, in
 * 196–228 ms instead of 263–443 ms (growing with the faces).
 *
 * No retry with a grey border for close-ups (SSD needed one): BlazeFace found all 17 sample
 * faces cropped with a 5% margin, and 16 of 17 with none; the border recovered none of them.
 * No mean with the mirror image either: it would run both networks twice (about 90 ms more a
 * photo, against the 200 ms goal), and a mirrored photo is already 0.38–0.55 from the original
 * (different women: 0.86 and more; see the threshold in ../index.ts).
 */
const CONFIG: Partial<Config> = {
  backend: 'wasm',
  wasmPath: WASM_DIR,
  modelBasePath: MODEL_DIR,
  cacheModels: false,
  debug: false,
  async: false,
  warmup: 'none',
  cacheSensitivity: 0,
  skipAllowed: false,
  filter: { enabled: false },
  face: {
    enabled: true,
    detector: { rotation: false, maxDetected: 2, minConfidence: 0.4, skipFrames: 0, skipTime: 0, return: false },
    mesh: { enabled: false },
    attention: { enabled: false },
    iris: { enabled: false },
    emotion: { enabled: false },
    description: { enabled: true, skipFrames: 0, skipTime: 0 },
    antispoof: { enabled: false },
    liveness: { enabled: false },
    gear: { enabled: false },
    ssrnet: { enabled: false },
    mobilefacenet: { enabled: false },
    insightface: { enabled: false },
  },
  body: { enabled: false },
  hand: { enabled: false },
  object: { enabled: false },
  gesture: { enabled: false },
  segmentation: { enabled: false },
} as Partial<Config>;

/**
 * human loads its models with the global fetch, which in Node reads no file:// URL. Replaced,
 * in the worker thread that loads the models, by one that reads files of MODEL_DIR and nothing
 * else: the models can never come from the network.
 */
function fetchModelFiles(): void {
  globalThis.fetch = async (input) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.startsWith(MODEL_DIR)) throw new Error(`the face model may not fetch ${url}`);
    return new Response(await readFile(fileURLToPath(url)));
  };
}

/** Loads the WASM backend, BlazeFace and faceres. */
export async function loadFaceModel(): Promise<FaceModel> {
  fetchModelFiles();
  const human = new HumanClass(CONFIG);
  await human.init();
  if (human.tf.getBackend() !== 'wasm') throw new Error('the tfjs wasm backend failed to start');
  await human.load();

  const detect = async (input: tf.Tensor3D) => {
    const result = await human.detect(input as never);
    if (result.error) throw new Error(`face detection failed: ${result.error}`);
    return result.face;
  };

  return {
    async describe(image) {
      const input = tf.tidy(() =>
        upright(fit(tf.tensor3d(image.data, [image.height, image.width, 3], 'int32')), image),
      );
      try {
        const faces = await detect(input);
        const [only] = faces;
        if (!only) return { ok: false, reason: 'no_face' };
        if (faces.length > 1) return { ok: false, reason: 'several_faces' };
        if (!only.embedding?.length) return { ok: false, reason: 'no_face' };
        return { ok: true, descriptor: unit(only.embedding) };
      } finally {
        input.dispose();
      }
    },
  };
}

/**
 * The descriptor scaled to length 1, so that the euclidean distance of two lies in 0–2 whatever
 * the lengths faceres gives (its raw distances on the samples: 3.8–6.5 for one face, 8.5 and more
 * for two women).
 */
function unit(embedding: number[]): number[] {
  const length = Math.hypot(...embedding);
  if (!(length > 0)) throw new Error('the description model gave an empty descriptor');
  return embedding.map((v) => v / length);
}

/** Scaled down to WORK_SIDE when larger. */
function fit(input: tf.Tensor3D): tf.Tensor3D {
  const [height, width] = input.shape;
  const scale = WORK_SIDE / Math.max(width, height);
  if (scale >= 1) return input;
  return tf.image.resizeBilinear(input, [Math.round(height * scale), Math.round(width * scale)]);
}

/**
 * Turned upright by the EXIF orientation: 5–8 swap the axes (transpose), then a mirror on the
 * columns, the rows or both.
 */
function upright(input: tf.Tensor3D, { orientation }: RgbImage): tf.Tensor3D {
  const axes = ([[], [], [1], [0, 1], [0], [], [1], [0, 1], [0]] as number[][])[orientation] ?? [];
  const turned = orientation >= 5 ? tf.transpose(input, [1, 0, 2]) : input;
  return axes.length ? tf.reverse(turned, axes) : turned;
}
