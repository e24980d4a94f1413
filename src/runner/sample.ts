/**
 * The child's side of the equivalence check (mode `sample`): pull the first elements of the
 * pipeline and digest each one (canonical.ts). Nothing is measured; the elements themselves are
 * the result. The sample ends at `maxElements`, at the pipeline's end, or when `seconds` have passed
 * (a sample cut short by time is still a prefix of the output, and the parent compares prefixes of
 * the same length only).
 */
import type { SampleMessage } from '../shared/profile';
import { NotComparable, elementDigest, rowsOf } from './canonical';
import type { DatasetLike } from './discover';

/** The digests of the pipeline's first `maxElements` elements, pulled within `seconds`; with `rows`, of the rows each groups (canonical.ts `rowsOf`). */
export async function sampleDigests(ds: DatasetLike, maxElements: number, seconds: number, rows = false): Promise<SampleMessage> {
  const digests: string[] = [];
  let elements = 0;
  const deadline = performance.now() + seconds * 1000;
  const it = ds[Symbol.asyncIterator]();
  let exhausted = false;
  try {
    while (elements < maxElements && performance.now() < deadline) {
      const r = await it.next();
      if (r.done) {
        exhausted = true;
        break;
      }
      elements++;
      if (rows) for (const row of rowsOf(r.value)) digests.push(elementDigest(row));
      else digests.push(elementDigest(r.value));
    }
  } catch (e) {
    const why = e instanceof NotComparable ? e.message : `the pipeline threw after ${digests.length} elements: ${e instanceof Error ? e.message : String(e)}`;
    return { type: 'sample', digests, exhausted, notComparable: why };
  } finally {
    if (!exhausted) await it.return?.().catch(() => undefined);
  }
  return { type: 'sample', digests, exhausted };
}
