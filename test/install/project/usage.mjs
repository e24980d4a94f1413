// plumber-data from an ES module: a worker-thread map over a range; prints what came out as JSON,
// and whether `import` and `require` reached the same copy of the library.
import { createRequire } from 'node:module';
import plumberData, { Dataset, range } from 'plumber-data';
import { double } from './double.mjs';

const require = createRequire(import.meta.url);
const out = [];
for await (const x of range(0, 40).map(double, { placement: 'worker', parallelism: 2, module: new URL('./double.mjs', import.meta.url).href })) out.push(x);
console.log(
  JSON.stringify({
    values: out.map((x) => x.value),
    threads: [...new Set(out.map((x) => x.thread))],
    oneCopy: require('plumber-data').Dataset === Dataset && plumberData.Dataset === Dataset,
  }),
);
