/**
 * Test photos built at test time from the sample collages that ship with face-api (a dev
 * dependency, for them only; several different women each): each face is cropped with a margin into a single-face JPEG, then varied
 * to make more photos of the same person (mirrored, 15% brighter, PNG, stored sideways with an
 * EXIF orientation). Nothing derived is committed; the buffers are built once per process.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  brighten,
  crop,
  decodeJpeg,
  encodeJpeg,
  encodePng,
  gradient,
  mirror,
  rotateLeft,
  withExifOrientation,
  type Rgb,
} from './images.js';

export interface Person {
  label: string;
  /** The face crop as a JPEG. */
  original: Buffer;
  mirrored: Buffer;
  brighter: Buffer;
  /** The same crop, lossless PNG. */
  png: Buffer;
  /** The crop turned a quarter left, with EXIF orientation 6 ("turn right to view"), as phones store portraits. */
  sideways: Buffer;
}

/** The variations of one face, besides the original. */
export const VARIANTS = ['mirrored', 'brighter', 'png', 'sideways'] as const;

export interface FaceFixtures {
  /** 17 different women. */
  persons: Person[];
  /** A whole sample collage: several faces. */
  severalFaces: Buffer;
  /** A synthetic gradient: no face. */
  noFace: Buffer;
}

const PACKAGE_DIR = path.dirname(createRequire(import.meta.url).resolve('@vladmandic/face-api/package.json'));

/**
 * Every face of the six sample collages, as [sample, x, y, width, height]: the boxes SSD finds
 * with a confidence of 0.9 or more (face-api 1.7.15), left to right.
 */
const FACES: [number, number, number, number, number][] = [
  [1, 414, 355, 178, 238],
  [1, 838, 421, 187, 227],
  [1, 1476, 200, 203, 241],
  [2, 1447, 153, 193, 243],
  [3, 585, 329, 199, 271],
  [3, 1514, 292, 170, 279],
  [4, 257, 184, 162, 246],
  [4, 664, 52, 187, 258],
  [4, 988, 180, 169, 228],
  [5, 377, 859, 172, 300],
  [5, 597, 415, 167, 249],
  [5, 787, 109, 156, 212],
  [5, 1112, 198, 159, 237],
  [5, 1406, 390, 166, 270],
  [6, 681, 321, 159, 306],
  [6, 1181, 305, 188, 280],
  [6, 1487, 263, 212, 294],
];

/** Margin around a box, as a fraction of its size on each side. */
const MARGIN = 0.2;

export function sampleJpeg(n: number): Buffer {
  return readFileSync(path.join(PACKAGE_DIR, 'demo', `sample${n}.jpg`));
}

let cached: FaceFixtures | undefined;

export function faceFixtures(): FaceFixtures {
  cached ??= build();
  return cached;
}

function build(): FaceFixtures {
  const samples = new Map<number, Rgb>();
  const persons = FACES.map(([sample, x, y, width, height]) => {
    if (!samples.has(sample)) samples.set(sample, decodeJpeg(sampleJpeg(sample)));
    const face = crop(samples.get(sample) as Rgb, { x, y, width, height }, MARGIN);
    return {
      label: `sample${sample}@${x},${y}`,
      original: encodeJpeg(face),
      mirrored: encodeJpeg(mirror(face)),
      brighter: encodeJpeg(brighten(face, 1.15)),
      png: encodePng(face),
      sideways: withExifOrientation(encodeJpeg(rotateLeft(face)), 6),
    };
  });
  return { persons, severalFaces: sampleJpeg(1), noFace: encodeJpeg(gradient(480, 360)) };
}
