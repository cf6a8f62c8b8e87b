/**
 * Format and size of an image read from its first bytes, so that a huge image is refused before
 * any pixel is decoded.
 */
export type ImageFormat = 'jpeg' | 'png';

export interface ImageHeader {
  format: ImageFormat;
  width: number;
  height: number;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function sniffFormat(bytes: Uint8Array): ImageFormat | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 8 && PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return 'png';
  return undefined;
}

/** Undefined when the bytes are neither JPEG nor PNG, or their header is broken. */
export function readHeader(bytes: Uint8Array): ImageHeader | undefined {
  const format = sniffFormat(bytes);
  const size = format === 'jpeg' ? jpegSize(bytes) : format === 'png' ? pngSize(bytes) : undefined;
  if (!format || !size || size.width < 1 || size.height < 1) return undefined;
  return { format, ...size };
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The first chunk must be IHDR: width and height are its first two big-endian words. */
function pngSize(bytes: Uint8Array) {
  if (bytes.length < 24) return undefined;
  const ihdr = String.fromCharCode(...bytes.subarray(12, 16));
  if (ihdr !== 'IHDR') return undefined;
  return { width: view(bytes).getUint32(16), height: view(bytes).getUint32(20) };
}

/** Walks the marker segments up to the first start-of-frame (SOFn), which holds the size. */
function jpegSize(bytes: Uint8Array) {
  const data = view(bytes);
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1] as number;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    // Standalone markers carry no length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return undefined; // scan or end before any frame
    const length = data.getUint16(at + 2);
    if (length < 2) return undefined;
    // SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (at + 9 > bytes.length) return undefined;
      return { height: data.getUint16(at + 5), width: data.getUint16(at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}
