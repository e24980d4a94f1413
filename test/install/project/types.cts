// plumber-data's types as a CommonJS file sees them (the "require" condition).
import { range, type Dataset } from 'plumber-data';

export const doubled: Dataset<number> = range(0, 3).map((x) => x * 2);
// @ts-expect-error map's fn takes the element type, a number (a type of `any` would let this pass).
range(0, 3).map((x: string) => x);
