import { range } from 'plumber-data';
function spin(seed: number, rounds: number): number { let h = seed | 0; for (let i = 0; i < rounds; i++) h = (Math.imul(h, 31) + i) | 0; return h; }
const big = (i: number) => { const h = spin(i, 1000); const o = new Float64Array(8192); for (let k = 0; k < 8192; k++) o[k] = ((h + k * 7919) | 0) / 65536; return o; };
(async () => {
  for (const path of [process.argv[2] ?? '/tmp/time-dbg.plumbercache', undefined]) {
    const ds = (path ? range(1500).map(big).cache(path) : range(1500).map(big).cache()).repeat(3);
    let n = 0; let t = performance.now();
    for await (const x of ds) { if (x === undefined) continue; n++; if (n % 1500 === 0) { const now = performance.now(); console.log(path ?? 'memory', n / 1500, (now - t).toFixed(1), 'ms'); t = now; } }
  }
})();
