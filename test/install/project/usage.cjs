// plumber-data from CommonJS: a worker-thread map over a range; prints what came out as JSON.
const { range } = require('plumber-data');
const { double } = require('./double.cjs');

async function main() {
  const out = [];
  for await (const x of range(0, 40).map(double, { placement: 'worker', parallelism: 2, module: require.resolve('./double.cjs') })) out.push(x);
  console.log(JSON.stringify({ values: out.map((x) => x.value), threads: [...new Set(out.map((x) => x.thread))] }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
