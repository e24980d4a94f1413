/**
 * A cheap estimate of an element's size in bytes, for `bytesProduced`: typed arrays and buffers
 * count their bytes, strings their length, numbers 8, and objects/arrays one level deep. Callers
 * sample one element per chunk rather than walking every element.
 */
export function estimateBytes(v: unknown, depth = 0): number {
  if (typeof v === 'number') return 8;
  if (typeof v === 'string') return v.length;
  if (typeof v === 'boolean') return 4;
  if (v === null || typeof v !== 'object') return 0;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (v instanceof ArrayBuffer) return v.byteLength;
  if (depth >= 2) return 16;
  if (Array.isArray(v)) {
    const n = v.length;
    if (n === 0) return 0;
    // Sample the first element: arrays in a batch are homogeneous in practice.
    return n * estimateBytes(v[0], depth + 1);
  }
  const data = (v as { data?: unknown }).data;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  let total = 0;
  for (const k in v) total += estimateBytes((v as Record<string, unknown>)[k], depth + 1);
  return total;
}
