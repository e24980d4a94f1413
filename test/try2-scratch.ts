import { runProfile } from '/work/wt-trace/src/runner/spawn';
(async () => {
  const p = await runProfile({ file: process.argv[2]!, seconds: 0.8, warmupSeconds: 0.2, probes: false });
  console.log(JSON.stringify({ error: p.error, trainer: p.trainer, root: p.pipeline.rootId, ops: p.ops.map((o) => [o.id, o.kind, o.counters.selfSeconds, o.counters.produced]) }));
})();
