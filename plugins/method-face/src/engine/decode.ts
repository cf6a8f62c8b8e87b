import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { readHeader } from './image-header.js';
import type { ImageLimits } from './types.js';

/** Decoded pixels, 3 bytes (R, G, B) per pixel, row by row, as stored in the file. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
  /** EXIF orientation, 1–8: how to turn the stored pixels upright (1: they are). */
  orientation: number;
}

export type DecodeResult = { ok: true; image: RgbImage } | { ok: false; reason: 'bad_image' | 'too_large' };

const tooLarge = (size: { width: number; height: number }, limits: ImageLimits) =>
  size.width > limits.maxSide || size.height > limits.maxSide || size.width * size.height > limits.maxPixels;

/** JPEG or PNG to RGB; the size is checked from the header before anything is decoded. */
export function decodeImage(bytes: Uint8Array, limits: ImageLimits): DecodeResult {
  const header = readHeader(bytes);
  if (!header) return { ok: false, reason: 'bad_image' };
  if (tooLarge(header, limits)) return { ok: false, reason: 'too_large' };
  let image: RgbImage;
  try {
    image = header.format === 'jpeg' ? decodeJpeg(bytes, limits) : decodePng(bytes);
  } catch {
    return { ok: false, reason: 'bad_image' };
  }
  // A header that lies about the size (a second frame, say) must not slip past the limit.
  if (tooLarge(image, limits)) return { ok: false, reason: 'too_large' };
  return { ok: true, image };
}

function decodeJpeg(bytes: Uint8Array, limits: ImageLimits): RgbImage {
  // jpeg-js keeps the EXIF block (after its "Exif\0" signature) but does not declare it.
  const { width, height, data, exifBuffer } = jpeg.decode(bytes, {
    useTArray: true,
    formatAsRGBA: false,
    // Tolerant decoding fills missing blocks with grey: a truncated upload would still "decode".
    tolerantDecoding: false,
    maxResolutionInMP: limits.maxPixels / 1e6,
  }) as ReturnType<typeof jpeg.decode> & { exifBuffer?: Uint8Array };
  return { width, height, data, orientation: exifOrientation(exifBuffer) };
}

/** pngjs gives RGBA at 8 bits per channel (it expands palettes, grey and 16 bits); alpha is dropped. */
function decodePng(bytes: Uint8Array): RgbImage {
  const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const pixels = png.width * png.height;
  const data = new Uint8Array(pixels * 3);
  for (let i = 0; i < pixels; i++) {
    data[i * 3] = png.data[i * 4] as number;
    data[i * 3 + 1] = png.data[i * 4 + 1] as number;
    data[i * 3 + 2] = png.data[i * 4 + 2] as number;
  }
  return { width: png.width, height: png.height, data, orientation: 1 };
}

/**
 * The Orientation tag (0x0112) of the first IFD of a JPEG's EXIF block, 1 when there is none.
 * Phone cameras store portrait photos sideways and set this tag rather than turn the pixels.
 */
export function exifOrientation(exif: Uint8Array | undefined): number {
  if (!exif || exif.length < 8) return 1;
  // The block jpeg-js keeps starts with the signature's second NUL, then the TIFF header.
  const start = exif[0] === 0 ? 1 : 0;
  const tiff = new DataView(exif.buffer, exif.byteOffset + start, exif.byteLength - start);
  try {
    const order = tiff.getUint16(0);
    if (order !== 0x4949 && order !== 0x4d4d) return 1; // 'II' little endian, 'MM' big endian
    const little = order === 0x4949;
    const ifd = tiff.getUint32(4, little);
    const entries = tiff.getUint16(ifd, little);
    for (let i = 0; i < entries; i++) {
      const entry = ifd + 2 + i * 12;
      if (tiff.getUint16(entry, little) !== 0x0112) continue;
      const value = tiff.getUint16(entry + 8, little);
      return value >= 1 && value <= 8 ? value : 1;
    }
  } catch {
    // A truncated block (RangeError): no orientation.
  }
  return 1;
}
