import { runProfile } from '/work/wt-trace/src/runner/spawn';
(async () => {
  const p = await runProfile({ file: process.argv[2]!, exportName: process.argv[3], seconds: 0.6, warmupSeconds: 0.2, probes: false, overrides: process.argv[4] ? JSON.parse(process.argv[4]) : undefined, onOutput: (s, t) => process.stderr.write(t) });
  console.log(JSON.stringify({ error: p.error, run: { elements: p.run.elements, seconds: p.run.seconds }, root: p.pipeline.rootId, ops: p.ops.map((o) => ({ id: o.id, kind: o.kind, d: o.dialect, l: o.levers, in: o.inputs, k: o.knobs, c: Object.fromEntries(Object.entries(o.counters).filter(([, v]) => v !== 0)) })) }, null, 1));
})();
