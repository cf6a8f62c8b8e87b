import { expect } from 'chai';
import {
  closeSharedFaceEngine,
  FaceEngine,
  FaceEngineBusyError,
  faceDistance,
  sharedFaceEngine,
  type DescribeResult,
} from '../src/index.js';
import { exifOrientation } from '../src/engine/decode.js';
import { faceFixtures, VARIANTS, type Person } from './fixtures.js';

/** The plugin's default threshold. */
const THRESHOLD = 0.65;

function descriptor(result: DescribeResult, what: string): number[] {
  if (!result.ok) expect.fail(`${what}: ${result.reason}`);
  return result.descriptor;
}

/** A PNG that is only a signature and an IHDR chunk (no pixels): decoding it would fail. */
function pngHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(8 + 13 + 4 + 8);
  ihdr.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  ihdr.writeUInt32BE(13, 8);
  ihdr.write('IHDR', 12, 'latin1');
  ihdr.writeUInt32BE(width, 16);
  ihdr.writeUInt32BE(height, 20);
  ihdr.set([8, 2, 0, 0, 0], 24); // 8 bits, RGB
  return ihdr;
}

/** A JPEG that is only SOI and a baseline frame header (SOF0): no tables, no scan. */
function jpegHeader(width: number, height: number): Buffer {
  const sof = Buffer.from([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03]);
  sof.writeUInt16BE(height, 7);
  sof.writeUInt16BE(width, 9);
  return Buffer.concat([sof, Buffer.from([1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9])]);
}

describe('@gatehouse-auth/method-face: the face engine', function () {
  // 85 photos described one after another: a busy machine takes minutes, an idle one about 30 s.
  this.timeout(240_000);
  const fixtures = faceFixtures();
  let engine: FaceEngine;
  const described = new Map<Person, number[]>();

  before(async () => {
    engine = await sharedFaceEngine();
  });
  after(() => closeSharedFaceEngine());

  it('describes photos of the same person within the threshold: mirrored, brighter, PNG, sideways with EXIF', async () => {
    for (const person of fixtures.persons) {
      const original = descriptor(await engine.describe(person.original), person.label);
      expect(original).to.have.length(1024);
      expect(Math.hypot(...original)).to.be.closeTo(1, 1e-6);
      described.set(person, original);
      for (const variant of VARIANTS) {
        const other = descriptor(await engine.describe(person[variant]), `${person.label} ${variant}`);
        expect(faceDistance(original, other), `${person.label} ${variant}`).to.be.below(THRESHOLD);
      }
    }
    expect(described.size).to.equal(17);
  });

  it('keeps every pair of different persons over the threshold', () => {
    const persons = [...described.entries()];
    expect(persons).to.have.length(17);
    let pairs = 0;
    for (const [i, [a, da]] of persons.entries()) {
      for (const [b, db] of persons.slice(i + 1)) {
        expect(faceDistance(da, db), `${a.label} / ${b.label}`).to.be.above(THRESHOLD);
        pairs++;
      }
    }
    expect(pairs).to.equal(136);
  });

  it('finds no face in a gradient, and several in a collage', async () => {
    expect(await engine.describe(fixtures.noFace)).to.deep.equal({ ok: false, reason: 'no_face' });
    expect(await engine.describe(fixtures.severalFaces)).to.deep.equal({ ok: false, reason: 'several_faces' });
  });

  it('refuses bytes that are not a whole JPEG or PNG image as bad_image', async () => {
    const jpeg = fixtures.persons[0]!.original;
    const png = fixtures.persons[0]!.png;
    const corrupt = Buffer.from(jpeg);
    corrupt.fill(0x55, 600, 2000); // entropy-coded data overwritten
    for (const [what, bytes] of Object.entries({
      empty: Buffer.alloc(0),
      text: Buffer.from('not an image at all'),
      random: Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251)),
      'truncated JPEG': jpeg.subarray(0, jpeg.length >> 1),
      'JPEG with corrupt data': corrupt,
      'truncated PNG': png.subarray(0, png.length >> 1),
      'JPEG header only': jpegHeader(640, 480),
      'PNG header only': pngHeader(640, 480),
      'GIF signature': Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'),
    })) {
      expect(await engine.describe(bytes), what).to.deep.equal({ ok: false, reason: 'bad_image' });
    }
  });

  it('refuses images over 4096 px a side or 16 Mpx from their header, before decoding', async () => {
    // Headers alone: a decoder would call them bad_image; too_large means they were never decoded.
    for (const [width, height] of [
      [4097, 16],
      [16, 4097],
      [4000, 4001],
      [65535, 65535],
    ] as const) {
      for (const bytes of [pngHeader(width, height), jpegHeader(width, height)]) {
        expect(await engine.describe(bytes), `${width}×${height}`).to.deep.equal({ ok: false, reason: 'too_large' });
      }
    }
    expect(await engine.describe(pngHeader(4096, 16))).to.deep.equal({ ok: false, reason: 'bad_image' });
    expect(await engine.describe(pngHeader(2 ** 31, 1))).to.deep.equal({ ok: false, reason: 'too_large' });
  });

  it('reads the EXIF orientation, and ignores a broken EXIF block', () => {
    const tiff = (order: 'II' | 'MM', value: number) => {
      const b = Buffer.alloc(1 + 8 + 2 + 12 + 4);
      const le = order === 'II';
      b.write(order, 1, 'latin1');
      b[le ? 3 : 4] = 42;
      b[le ? 5 : 8] = 8;
      b[le ? 9 : 10] = 1;
      b.set(le ? [0x12, 0x01, 3, 0] : [0x01, 0x12, 0, 3], 11);
      b[le ? 15 : 18] = 1;
      b[le ? 19 : 20] = value;
      return b;
    };
    expect(exifOrientation(tiff('MM', 6))).to.equal(6);
    expect(exifOrientation(tiff('II', 8))).to.equal(8);
    expect(exifOrientation(tiff('II', 9))).to.equal(1);
    expect(exifOrientation(tiff('MM', 6).subarray(0, 14))).to.equal(1);
    expect(exifOrientation(Buffer.from('garbage!garbage!'))).to.equal(1);
    expect(exifOrientation(undefined)).to.equal(1);
  });

  it('refuses images beyond its queue, and replaces a worker that takes too long', async function () {
    const own = await FaceEngine.start({ maxQueue: 1, timeoutMs: 1 });
    try {
      const photo = fixtures.persons[0]!.original;
      const outcomes = await Promise.allSettled([own.describe(photo), own.describe(photo), own.describe(photo)]);
      expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
      const [first, second, third] = outcomes.map((o) => (o as PromiseRejectedResult).reason as Error);
      expect(third).to.be.instanceOf(FaceEngineBusyError);
      expect(first!.message).to.equal('face describe failed: it took over 1 ms');
      // The second waited, then ran in a new worker (and took too long too).
      expect(second!.message).to.equal('face describe failed: it took over 1 ms');
      expect(own.stats).to.deep.equal({ workerStarts: 2, described: 0 });
    } finally {
      await own.close();
    }
    let closed: unknown;
    await own.describe(Buffer.alloc(1)).catch((e: unknown) => (closed = e));
    expect(String(closed)).to.include('closed');
  });
});
