/**
 * The graph of pipelines written in other dialects than plumber-data — tfjs-data, Node streams,
 * async-generator chains — read from fixtures written the way people write them: kinds in the
 * shared vocabulary, op ids the runner computes from a V8 stack, knobs under plumber-data's names
 * with the dialect's spelling in optionNames, levers, pipeline()/compose() argument sites, and the
 * places Plumber stops with a sentence.
 */
import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { Dataset } from '@tensorflow/tfjs-data';
import type { FileGraph, GraphOp, Knob, PipelineGraph } from '../../../src/engine/graph/types';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { matchesFixture, open } from '../server/helpers';

const DIR = path.resolve(__dirname, '../../fixtures/pipelines/dialects');
const EXPECTED = path.join(DIR, 'expected');

function graphOf(name: string): FileGraph {
  return open(path.join(DIR, name)).graph;
}

function pipeline(graph: FileGraph, name: string): PipelineGraph {
  const p = graph.pipelines.find((x) => x.name === name);
  assert.ok(p, `${name} in ${graph.pipelines.map((x) => x.name).join(', ')}`);
  return p;
}

function op(p: PipelineGraph, id: string): GraphOp {
  const o = p.ops.find((x) => x.id === id);
  assert.ok(o, `${id} in ${p.ops.map((x) => x.id).join(', ')}`);
  return o;
}

/** A knob as `text@line:column` (1-based) for a literal or expression, `absent` otherwise. */
function knobWords(k: Knob | undefined): string | undefined {
  if (!k) return undefined;
  if (k.state === 'absent') return 'absent';
  return `${k.text}@${k.span.range.start.line + 1}:${k.span.range.start.character + 1}`;
}

function summary(graph: FileGraph): unknown {
  const rel = (f: string | undefined): string | undefined => (f ? path.relative(DIR, f) : undefined);
  return {
    pipelines: graph.pipelines.map((p) => ({
      name: p.name,
      exported: p.exported,
      factory: p.factory,
      dialect: p.dialect,
      rootId: p.rootId,
      partial: p.partial,
      ...(p.argSites ? { argSites: p.argSites.map((a) => ({ site: `${rel(a.site.file)}:${a.site.line}:${a.site.column}`, args: a.args })) } : {}),
      ops: p.ops.map((o) => ({
        id: o.id,
        kind: o.kind,
        label: o.label,
        inputs: o.inputs,
        ...(o.parent ? { parent: o.parent } : {}),
        dialect: o.dialect,
        levers: o.levers,
        ...(o.optionNames ? { optionNames: o.optionNames } : {}),
        knobs: Object.fromEntries(Object.entries(o.knobs).map(([k, v]) => [k, knobWords(v)])),
        ...(o.options ? { options: o.options.state } : {}),
        ...(o.fn ? { fn: { name: o.fn.name, form: o.fn.form, async: o.fn.async, exportName: o.fn.exportName, file: rel(o.fn.file) } } : {}),
        ...(o.random ? { random: o.random.reason } : {}),
      })),
    })),
    stops: (graph.stops ?? []).map((s) => `${s.range.start.line + 1}:${s.range.start.character + 1} ${s.message}`),
  };
}

describe('dialect graphs', () => {
  for (const name of readdirSync(DIR).filter((f) => /\.[jt]s$/.test(f))) {
    it(`extracts ${name} as expected/${name.replace(/\.[jt]s$/, '.json')} says`, () => {
      matchesFixture(summary(graphOf(name)), path.join(EXPECTED, name.replace(/\.[jt]s$/, '.json')));
    });
  }

  describe('tfjs-data', () => {
    it('reads a namespace-imported chain in the shared kinds: generator is a from, mapAsync an async map', () => {
      const train = pipeline(graphOf('tfjs-data.ts'), 'train');
      assert.equal(train.dialect, 'tfjs-data');
      assert.deepEqual(
        train.ops.map((o) => `${o.kind}:${o.label}`),
        ['from:generator(records)', 'map:map(decode)', 'map:mapAsync(lookup)', 'shuffle:shuffle(32)', 'batch:batch(8)', 'prefetch:prefetch(4)'],
      );
      assert.equal(op(train, '23:4').fn?.async, true);
      assert.equal(op(train, '22:4').fn?.exportName, 'decode');
      assert.equal(op(train, '24:4').random?.reason, 'shuffle');
    });

    it('gives every tfjs-data stage the prefetch lever only, and its prefetch(n) as bufferSize with the span of n', () => {
      const train = pipeline(graphOf('tfjs-data.ts'), 'train');
      assert.ok(train.ops.every((o) => o.dialect === 'tfjs-data' && o.levers?.join() === 'prefetch'));
      assert.equal(knobWords(op(train, '26:4').knobs['bufferSize']), '4@26:13');
      assert.equal(knobWords(op(train, '25:4').knobs['batchSize']), '8@25:10');
    });

    it('follows named imports and zip over an array of datasets, inputs in order', () => {
      const pairs = pipeline(graphOf('tfjs-data.ts'), 'pairs');
      const zip = pairs.ops.find((o) => o.kind === 'zip')!;
      assert.deepEqual(
        zip.inputs.map((i) => op(pairs, i).label),
        ['array(…)', 'filter(…)'],
      );
      assert.equal(pairs.rootId, pairs.ops.at(-1)!.id);
    });

    it('reads a stage on a parameter typed as a tfjs-data Dataset through the type checker, marked partial', () => {
      const helper = graphOf('tfjs-data.ts').pipelines.find((p) => p.ops.some((o) => o.label === 'repeat(2)'))!;
      assert.equal(helper.partial, true);
      assert.deepEqual(
        helper.ops.map((o) => o.kind),
        ['map', 'repeat'],
      );
    });

    it("finds a training script's unexported dataset, tf from require('@tensorflow/tfjs-node')", () => {
      const graph = graphOf('tfjs-node-script.ts');
      assert.deepEqual(
        graph.pipelines.map((p) => p.name),
        ['local:ds@15'],
      );
      assert.deepEqual(
        graph.pipelines[0]!.ops.map((o) => o.id),
        ['15:22', '15:38', '15:53', '15:63'],
      );
    });

    it("follows `import { data } from '@tensorflow/tfjs'` and reads csv as a csv source with its path", () => {
      const load = pipeline(graphOf('tfjs-named.ts'), 'load');
      assert.equal(load.factory, true);
      assert.equal(load.ops[0]!.kind, 'csv');
      assert.equal(knobWords(load.ops[0]!.knobs['path']), "'file://./rows.csv'@5:19");
    });
  });

  describe('Node streams', () => {
    it('keys concurrency and highWaterMark under parallelism and bufferSize, and says how Node spells them', () => {
      const records = pipeline(graphOf('streams-chain.ts'), 'records');
      const map = op(records, '18:6');
      assert.equal(knobWords(map.knobs['parallelism']), '1@18:33');
      assert.deepEqual(map.optionNames, { parallelism: 'concurrency', prefetch: 'highWaterMark' });
      assert.deepEqual(map.levers, ['parallelism', 'prefetch']);
      assert.equal(map.options?.state, 'object');
      assert.equal(knobWords(op(records, '17:19').knobs['bufferSize']), '8@17:48');
    });

    it('gives a sync filter only the buffer lever (concurrency cannot help it) and take none (it takes no highWaterMark), as the runner records them', () => {
      const records = pipeline(graphOf('streams-chain.ts'), 'records');
      assert.deepEqual(op(records, '19:6').levers, ['prefetch']);
      assert.equal(op(records, '19:6').options?.state, 'absent');
      assert.deepEqual(op(records, '20:6').levers, []);
    });

    it('chains an async generator into Readable.from as its input', () => {
      const records = pipeline(graphOf('streams-chain.ts'), 'records');
      assert.deepEqual(op(records, '17:19').inputs, ['17:24']);
      assert.equal(op(records, '17:24').dialect, 'async-generator');
    });

    it('gives each pipeline() argument a stage with the id of its start, and hands the runner those ids', () => {
      const graph = graphOf('streams-pipeline.ts');
      const main = pipeline(graph, 'local:pipeline@22');
      assert.deepEqual(
        main.ops.map((o) => `${o.id} ${o.kind}`),
        ['23:8 from', '24:10 map', '25:5 flatMap', '26:5 flatMap', '27:5 flatMap'],
      );
      // A stream the runner registers where its factory is called (createReadStream, zlib) keeps that id; a Transform
      // object and generator functions, which no stack names, take their argument's start.
      assert.deepEqual(main.argSites, [{ site: { file: path.join(DIR, 'streams-pipeline.ts'), line: 22, column: 9 }, args: ['23:8', '24:10', '25:5', '26:5', '27:5', null] }]);
      assert.deepEqual(op(main, '23:8').levers, [], 'a file read counts its highWaterMark in bytes');
      assert.equal(knobWords(op(main, '23:8').knobs['bufferSize']), '1 << 16@23:49');
      assert.equal(knobWords(op(main, '25:5').knobs['bufferSize']), '16@10:18');
    });

    it('follows .pipe() through zlib and a Transform subclass, the subclass at its `new` as V8 places a construction', () => {
      const upper = pipeline(graphOf('streams-pipe.ts'), 'upper');
      assert.deepEqual(
        upper.ops.map((o) => `${o.id} ${o.kind} ${o.inputs.join(',')}`),
        ['13:10 from ', '13:50 map 13:10', '13:71 flatMap 13:50'],
      );
      // No constructor of its own: `new Upper({ highWaterMark })` would reach the stream, so its options are read; no lever, as the runner records it.
      assert.deepEqual(op(upper, '13:71').levers, []);
      assert.equal(op(upper, '13:71').options?.state, 'absent');
    });

    it("reads CommonJS require('node:stream') and stages held by variables, the callback not a stage", () => {
      const run = graphOf('streams-require.js').pipelines[0]!;
      assert.deepEqual(run.argSites?.[0]?.args, ['14:29', '6:21', '14:64', null]);
      assert.deepEqual(
        run.ops.map((o) => o.label),
        ["createReadStream('in.gz')", 'pipeline: gunzip', 'pipeline: count'],
      );
    });

    it('reads compose() arguments written on one line as separate stages', () => {
      const decoder = pipeline(graphOf('streams-pipeline.ts'), 'decoder');
      assert.deepEqual(
        decoder.ops.map((o) => o.label),
        ['compose: createGunzip', 'compose: splitLines', 'compose: parse'],
      );
      assert.deepEqual(decoder.argSites?.[0]?.args, ['34:43', '34:59', '34:71']);
    });
  });

  describe('async-generator chains', () => {
    it('ids each stage by the callee name of its call and chains them by their consumed argument', () => {
      const samples = pipeline(graphOf('generators.ts'), 'samples');
      assert.equal(samples.dialect, 'async-generator');
      const main = samples.ops.filter((o) => o.parent === undefined);
      assert.deepEqual(
        main.map((o) => `${o.id} ${o.kind} ${o.inputs.join(',')}`),
        ['37:29 from ', '37:22 flatMap 37:29', '37:16 flatMap 37:22', '37:10 flatMap 37:16'],
      );
      assert.ok(samples.ops.every((o) => o.levers?.length === 0));
    });

    it('nests a stage composed inside another stage under it', () => {
      const samples = pipeline(graphOf('generators.ts'), 'samples');
      const square = samples.ops.find((o) => o.label === 'square(…)')!;
      assert.equal(square.parent, '37:16');
      assert.equal(square.id, '16:25');
    });

    it('keeps two pipelines written on one line apart, each stage with its own column', () => {
      const graph = graphOf('generators.ts');
      assert.deepEqual(
        pipeline(graph, 'direct').ops.map((o) => o.id),
        ['40:30', '40:23'],
      );
      assert.deepEqual(
        pipeline(graph, 'twoOnALine').ops.map((o) => o.id),
        ['40:84', '40:77', '40:70'],
      );
    });
  });

  describe('stages nested in another stage’s fn', () => {
    it('gives the stream a flatMap callback opens its own operators, several to a line, nested in the flatMap', () => {
      const shards = pipeline(graphOf('nested.ts'), 'shards');
      assert.deepEqual(
        shards.ops.map((o) => `${o.id} ${o.kind} parent:${o.parent ?? '-'} in:${o.inputs.join(',')}`),
        ['10:38 from parent:- in:', '10:77 from parent:10:51 in:', '10:107 map parent:10:51 in:10:77', '10:51 flatMap parent:- in:10:38'],
      );
      assert.equal(shards.rootId, '10:51');
    });

    it('nests the generator stages an async generator handed to tf.data generator() iterates', () => {
      const p = pipeline(graphOf('nested.ts'), 'fromGenerators');
      assert.deepEqual(
        p.ops.filter((o) => o.parent === '21:4').map((o) => `${o.id} ${o.dialect}`),
        ['22:34 async-generator', '22:27 async-generator'],
      );
    });
  });

  describe('where Plumber stops', () => {
    it('says why for a chain built in a loop, a device, an unknown pipeline stage and an unknown method — and shows no chain with stages missing', () => {
      const graph = graphOf('stops.ts');
      const stops = (graph.stops ?? []).map((s) => `${s.range.start.line + 1}:${s.range.start.character + 1}`);
      assert.deepEqual(stops.sort(), ['11:26', '15:37', '18:45', '21:59'].sort());
      assert.ok(graph.stops!.every((s) => /Plumber/.test(s.message)));
      // The loop-built dataset is not shown at all (its stages would join to the wrong operators).
      assert.equal(
        graph.pipelines.some((p) => p.name.startsWith('local:ds') || p.name === 'looped'),
        false,
      );
    });
  });

  describe('where no extractor can follow', () => {
    it('says so for a chain built by reduce and for a pipeline library Plumber does not read, and not for array methods', () => {
      const graph = graphOf('stops-unknown.ts');
      assert.deepEqual(
        (graph.stops ?? []).map((s) => `${s.range.start.line + 1}:${s.range.start.character + 1}`),
        ['7:36', '11:4'],
      );
      assert.match(graph.stops![1]!.message, /'highland', a library Plumber does not read/);
      assert.deepEqual(graph.pipelines, [], 'the reduce seed is not shown as a pipeline of its own');
    });
  });

  describe('ids equal the V8 stack of the call', () => {
    // The runner ids a stage by the caller's frame when the library method runs; wrap the real
    // methods, build the fixtures' chains, and compare with the graph's ids.
    type Proto = Record<string, (...args: unknown[]) => unknown>;
    function capture(targets: Array<[Proto, string]>, run: () => Promise<void>): Promise<string[]> {
      const seen: string[] = [];
      const undo = targets.map(([proto, name]) => {
        const original = proto[name]!;
        proto[name] = function (this: unknown, ...args: unknown[]) {
          const frame = (new Error().stack ?? '').split('\n')[2] ?? '';
          const m = /\(?([^()\s]+):(\d+):(\d+)\)?$/.exec(frame.trim());
          if (m && m[1]!.startsWith(DIR)) seen.push(`${m[2]}:${m[3]}`);
          return original.apply(this, args);
        };
        return () => {
          proto[name] = original;
        };
      });
      return run().then(
        () => {
          undo.forEach((u) => u());
          return seen;
        },
        (e: unknown) => {
          undo.forEach((u) => u());
          throw e;
        },
      );
    }

    it("for tfjs-data's methods", async () => {
      const proto = Dataset.prototype as unknown as Proto;
      const seen = await capture(
        ['map', 'mapAsync', 'shuffle', 'batch', 'prefetch'].map((n) => [proto, n] as [Proto, string]),
        async () => {
          await import(path.join(DIR, 'tfjs-data.ts'));
        },
      );
      const train = pipeline(graphOf('tfjs-data.ts'), 'train');
      for (const id of ['22:4', '23:4', '24:4', '25:4', '26:4']) assert.ok(seen.includes(id), `${id} in ${seen.join(' ')}`);
      assert.ok(train.ops.slice(1).every((o) => seen.includes(o.id)));
    });

    it("for Node streams' Readable.from and operators", async () => {
      const seen = await capture(
        [
          [Readable as unknown as Proto, 'from'],
          [Readable.prototype as unknown as Proto, 'map'],
          [Readable.prototype as unknown as Proto, 'filter'],
          [Readable.prototype as unknown as Proto, 'take'],
        ],
        async () => {
          const m = (await import(path.join(DIR, 'streams-chain.ts'))) as { records(): Readable };
          m.records().destroy();
        },
      );
      const records = pipeline(graphOf('streams-chain.ts'), 'records');
      assert.deepEqual(
        records.ops.filter((o) => o.dialect === 'node-streams').map((o) => o.id),
        seen,
      );
    });
  });
});

describe('dialect graphs of half-typed files', () => {
  it('reads every prefix of each dialect fixture without throwing (the file as it is being typed)', function () {
    // Each prefix is a fresh parse and type check: many of them on a shared machine.
    this.timeout(180_000);
    for (const name of readdirSync(DIR).filter((f) => /\.[jt]s$/.test(f))) {
      const file = path.join(DIR, name);
      const text = readFileSync(file, 'utf8');
      const ws = new GraphWorkspace({
        onError: (f, e) => {
          throw new Error(`${f}: ${String(e)}`);
        },
      });
      for (let cut = 0; cut <= text.length; cut += Math.max(1, Math.floor(text.length / 16))) {
        ws.setText(file, text.slice(0, cut));
        ws.graphOf(file);
      }
    }
  });
});

describe('a pipeline converted to plumber-data', () => {
  it('keeps its export: the chain inside toTfDataset(…) or a lazy async generator is the exported pipeline, not a local one', () => {
    const graph = new GraphWorkspace().graphOf(path.resolve(__dirname, '../../fixtures/runner-dialects/converted.ts'));
    for (const name of ['asTf', 'lazy']) {
      const p = pipeline(graph, name);
      assert.equal(p.exported, true);
      assert.deepEqual(
        p.ops.map((o) => [o.kind, o.dialect]),
        [
          ['from', undefined],
          ['map', undefined],
        ],
      );
    }
    assert.ok(!graph.pipelines.some((p) => p.name.startsWith('local:')), 'no chain is left as a local one');
  });
});
