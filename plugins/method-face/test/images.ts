/** Small pixel operations on RGB images, for building test photos. */
import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';

/** 3 bytes (R, G, B) per pixel, row by row. */
export interface Rgb {
  width: number;
  height: number;
  data: Uint8Array;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function decodeJpeg(bytes: Uint8Array): Rgb {
  return jpeg.decode(bytes, { useTArray: true, formatAsRGBA: false });
}

function toRgba(image: Rgb): Buffer {
  const rgba = Buffer.alloc(image.width * image.height * 4, 255);
  for (let i = 0, j = 0; i < image.data.length; i += 3, j += 4) {
    rgba[j] = image.data[i] as number;
    rgba[j + 1] = image.data[i + 1] as number;
    rgba[j + 2] = image.data[i + 2] as number;
  }
  return rgba;
}

export function encodeJpeg(image: Rgb, quality = 90): Buffer {
  return jpeg.encode({ width: image.width, height: image.height, data: toRgba(image) }, quality).data;
}

export function encodePng(image: Rgb): Buffer {
  const png = new PNG({ width: image.width, height: image.height });
  toRgba(image).copy(png.data);
  return PNG.sync.write(png);
}

/** The box grown by `margin` of its size on every side, clipped to the image. */
export function crop(image: Rgb, box: Box, margin: number): Rgb {
  const x0 = Math.max(0, Math.floor(box.x - box.width * margin));
  const y0 = Math.max(0, Math.floor(box.y - box.height * margin));
  const x1 = Math.min(image.width, Math.ceil(box.x + box.width * (1 + margin)));
  const y1 = Math.min(image.height, Math.ceil(box.y + box.height * (1 + margin)));
  const width = x1 - x0;
  const height = y1 - y0;
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const from = ((y0 + y) * image.width + x0) * 3;
    data.set(image.data.subarray(from, from + width * 3), y * width * 3);
  }
  return { width, height, data };
}

/** Mirrored left to right. */
export function mirror(image: Rgb): Rgb {
  const data = new Uint8Array(image.data.length);
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const from = (y * image.width + x) * 3;
      const to = (y * image.width + (image.width - 1 - x)) * 3;
      data[to] = image.data[from] as number;
      data[to + 1] = image.data[from + 1] as number;
      data[to + 2] = image.data[from + 2] as number;
    }
  }
  return { ...image, data };
}

/** Turned a quarter turn to the left (counter-clockwise). */
export function rotateLeft(image: Rgb): Rgb {
  const { width, height } = image;
  const data = new Uint8Array(image.data.length);
  // Output (x, y), `height` wide and `width` tall, shows source (width - 1 - y, x).
  for (let y = 0; y < width; y++) {
    for (let x = 0; x < height; x++) {
      const from = (x * width + (width - 1 - y)) * 3;
      data.set(image.data.subarray(from, from + 3), (y * height + x) * 3);
    }
  }
  return { width: height, height: width, data };
}

/** The JPEG with an EXIF block (APP1, big-endian TIFF) that holds only an Orientation tag. */
export function withExifOrientation(jpegBytes: Buffer, orientation: number): Buffer {
  // prettier-ignore
  const app1 = Buffer.from([
    0xff, 0xe1, 0x00, 0x22, // APP1, 34 bytes with this length
    0x45, 0x78, 0x69, 0x66, 0x00, 0x00, // "Exif\0\0"
    0x4d, 0x4d, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x08, // "MM", 42, first IFD at 8
    0x00, 0x01, // one entry
    0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, orientation, 0x00, 0x00, // Orientation, SHORT, 1
    0x00, 0x00, 0x00, 0x00, // no next IFD
  ]);
  return Buffer.concat([jpegBytes.subarray(0, 2), app1, jpegBytes.subarray(2)]);
}

/** Every channel multiplied by `factor`, clipped at 255. */
export function brighten(image: Rgb, factor: number): Rgb {
  return { ...image, data: image.data.map((v) => Math.min(255, Math.round(v * factor))) };
}

/** A smooth two-colour gradient with soft waves: texture, but no face. */
export function gradient(width: number, height: number): Rgb {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const wave = 20 * Math.sin(x / 23) * Math.cos(y / 31);
      data[i] = Math.round(40 + (180 * x) / width + wave);
      data[i + 1] = Math.round(60 + (120 * y) / height);
      data[i + 2] = Math.round(200 - (150 * x) / width - wave);
    }
  }
  return { width, height, data };
}
