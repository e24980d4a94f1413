// plumber-data's types as an ES module sees them (the "import" condition), default import included.
import plumberData, { range, type Dataset } from 'plumber-data';

export const doubled: Dataset<number> = range(0, 3).map((x) => x * 2);
export const sameRange: typeof range = plumberData.range;
// @ts-expect-error map's fn takes the element type, a number (a type of `any` would let this pass).
range(0, 3).map((x: string) => x);
