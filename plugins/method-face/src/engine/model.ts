import { createRequire } from 'node:module';
import path from 'node:path';
// The WASM build: the package's main entry needs @tensorflow/tfjs-node, whose install script
// downloads libtensorflow.
import faceapi from '@vladmandic/face-api/dist/face-api.node-wasm.js';
// The same CommonJS instance face-api requires (there is no exports map), with complete types.
import tf from '@tensorflow/tfjs';
import type { RgbImage } from './decode.js';
import type { DescribeResult } from './types.js';

export interface FaceModel {
  /** Finds every face; a descriptor only when there is exactly one. */
  describe(image: RgbImage): Promise<DescribeResult>;
}

/** The weights ship inside the face-api package: loading them reads files, never the network. */
const MODEL_DIR = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@vladmandic/face-api/package.json')),
  'model',
);

/**
 * Longer side of the image the networks see. The detector sees 512 × 512 and the recognition
 * network a 150 × 150 chip of the face whatever the photo's size, so a larger photo only costs
 * time and memory (the close-up border below grows it by 1.6² more).
 */
const WORK_SIDE = 1024;

/** Grey border around a close-up, on every side, as a fraction of the longer side. */
const CLOSE_UP_BORDER = 0.3;

/**
 * Loads the WASM backend and the three networks of a describe. SSD, not the tiny detector,
 * because "exactly one face" is a check: on the package's sample collages the tiny detector
 * found 1 of 3 faces in sample2.jpg and 3 of 4 in sample4.jpg (so a photo of several people
 * could pass as one, and enrolment could pick any of them); SSD found all 22. It costs about
 * 190 ms per pass instead of about 50 ms, in the worker.
 */
export async function loadFaceModel(): Promise<FaceModel> {
  if (!(await tf.setBackend('wasm'))) throw new Error('the tfjs wasm backend failed to start');
  await tf.ready();
  const { ssdMobilenetv1, faceLandmark68Net, faceRecognitionNet } = faceapi.nets;
  await Promise.all([ssdMobilenetv1, faceLandmark68Net, faceRecognitionNet].map((net) => net.loadFromDisk(MODEL_DIR)));
  const options = new faceapi.SsdMobilenetv1Options({ minConfidence: 0.5 });
  const detect = (input: tf.Tensor3D) => faceapi.detectAllFaces(input, options);

  return {
    async describe(image) {
      let input = tf.tidy(() => upright(fit(tf.tensor3d(image.data, [image.height, image.width, 3], 'int32')), image));
      try {
        // Detection first, alone: landmarks and descriptors of a crowd would be wasted work.
        let faces = await detect(input);
        if (faces.length === 0) {
          const padded = padForCloseUp(input);
          input.dispose();
          input = padded;
          faces = await detect(input);
        }
        const [only] = faces;
        if (!only) return { ok: false, reason: 'no_face' };
        if (faces.length > 1) return { ok: false, reason: 'several_faces' };
        const parent = Promise.resolve(faceapi.extendWithFaceDetection({}, only));
        const found = await new faceapi.DetectSingleFaceLandmarksTask(parent, input, false);
        if (!found) return { ok: false, reason: 'no_face' };
        // The chip face-api's withFaceDescriptor() describes: the box around the landmarks.
        const box = found.landmarks.align(null, { useDlibAlignment: true });
        // face-api declares its own copy of the tfjs types: the same tensors at run time.
        const [chip] = (await faceapi.extractFaceTensors(input as never, [box])) as unknown as tf.Tensor3D[];
        if (!chip) return { ok: false, reason: 'no_face' };
        const mirrored = tf.reverse(chip, 1);
        try {
          return {
            ok: true,
            descriptor: mean(await faceapi.nets.faceRecognitionNet.computeFaceDescriptor([chip, mirrored])),
          };
        } finally {
          chip.dispose();
          mirrored.dispose();
        }
      } finally {
        input.dispose();
      }
    },
  };
}

/**
 * The mean of the descriptors of the face and of its mirror image. A front camera may save the
 * photo mirrored or not: on the 17 sample faces a mirrored photo was 0.17–0.45 away from the
 * original with one descriptor (different women: 0.50 and more), and 0.04–0.39 with the mean
 * (different women: 0.48 and more). It costs one more run of the recognition network (~16 ms).
 */
function mean(descriptors: Float32Array | Float32Array[]): number[] {
  const [a, b] = descriptors as Float32Array[];
  if (!a || !b) throw new Error('the recognition network gave no descriptor');
  return Array.from(a, (v, i) => (v + (b[i] as number)) / 2);
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

/**
 * The image centred on a grey square with a border. SSD misses faces that fill the frame (a
 * selfie, a tight crop): on tight crops of the package's 17 sample faces it found 11 without the
 * border and all 17 with it. Only a retry: the border shrinks the faces of a wide photo, and the
 * first pass must keep finding every one of them for the several-faces check.
 */
function padForCloseUp(input: tf.Tensor3D): tf.Tensor3D {
  const [height, width] = input.shape;
  const side = Math.round(Math.max(width, height) * (1 + 2 * CLOSE_UP_BORDER));
  const top = Math.floor((side - height) / 2);
  const left = Math.floor((side - width) / 2);
  return tf.pad(
    input,
    [
      [top, side - height - top],
      [left, side - width - left],
      [0, 0],
    ],
    128,
  );
}
