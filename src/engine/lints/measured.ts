/**
 * Lints that need a profile: what the run measured says about the source. Shown with the static
 * lints (same shape, same diagnostics), one per operator and rule, for every profiled pipeline of
 * a document. Pure: a pipeline's graph, its profile and the join between them come in as data, so
 * the editor (its last profiles) and the command line (a stored profile) get the same findings.
 */
import { MEMORY_MEASURED_RULES, memoryLints } from './memory';
import { READER_MEASURED_RULES, readerMeasuredLints } from './readers';
import type { GraphOp, PipelineGraph } from '../graph/types';
import type { Profile } from '../../shared/profile';
import { formatPercent } from '../../model/describe';
import { paddingOf } from '../../model/dataflow';
import { smallShuffle, staticSize, type LintFinding } from './rules';
import { SHUFFLE_FILL_RULE, shuffleFillLint } from './shuffleFill';

/** Every measured rule id with a one-line summary (for docs and the README table). */
export const MEASURED_RULES: Record<string, string> = {
  'plumber/padding-waste': 'a large share of the positions paddedBatch / bucketBySequenceLength produce is padding (measured)',
  'plumber/shuffle-buffer-small': 'a shuffle buffer much smaller than the dataset, sized by the profiled run when the source does not say',
  [SHUFFLE_FILL_RULE]: 'a shuffle after expensive work whose buffer fill takes most of the time to the first batch (predicted from a profiled run)',
  ...READER_MEASURED_RULES,
  ...MEMORY_MEASURED_RULES,
};

/**
 * From this share of padded positions on, the finding is shown: a quarter of every batch's
 * positions (and of the model's work on them) is then spent on padding. A policy line; the
 * finding reports the measured share itself.
 */
export const PADDING_WASTE_SHARE = 0.25;

function padWords(kind: string, label: string, share: number, meanLength: number | undefined, meanPadded: number | undefined): string {
  const lengths =
    meanLength !== undefined && meanPadded !== undefined
      ? ` (measured: elements hold ${Math.round(meanLength).toLocaleString('en-US')} positions on average and are padded to ${Math.round(meanPadded).toLocaleString('en-US')})`
      : ' (measured)';
  const head = `${formatPercent(share)} of the positions in ${label}'s batches are padding${lengths}.`;
  if (kind === 'bucketBySequenceLength') {
    return `${head} Its buckets are too wide for these lengths: narrower boundaries (more of them around the mean length${meanLength !== undefined ? `, ${Math.round(meanLength)}` : ''}) would cut it, or padToBucketBoundary: false if it is set.`;
  }
  return `${head} bucketBySequenceLength with boundaries around the mean length${meanLength !== undefined ? ` (${Math.round(meanLength)} positions)` : ''} would cut it: elements of similar lengths share a batch and pad less.`;
}

/** One pipeline as the measured rules read it: its graph, its last profile if any, and the profile's operators joined to the graph's (`joinOps`). */
export interface MeasuredPipeline {
  graph: PipelineGraph;
  profile: Profile | undefined;
  byProfileId: Map<string, GraphOp>;
}

/** The measured findings of the profiled pipelines among `views`, once per operator and rule. */
export function measuredLints(views: MeasuredPipeline[]): LintFinding[] {
  const out: LintFinding[] = [];
  const seen = new Set<string>();
  const add = (f: LintFinding | undefined): void => {
    if (!f) return;
    const key = `${f.rule}@${f.op.file}:${f.op.name.start}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(f);
  };
  for (const v of views) {
    const profile = v.profile;
    if (!profile || profile.error) continue;
    for (const f of readerMeasuredLints(v)) add(f);
    add(shuffleFillLint(profile, v.byProfileId));
    for (const f of memoryLints(v)) add(f);
    for (const pad of paddingOf(profile)) {
      const op = v.byProfileId.get(pad.opId);
      if (!op || pad.share < PADDING_WASTE_SHARE) continue;
      add({ rule: 'plumber/padding-waste', severity: 'information', message: padWords(pad.kind, op.label, pad.share, pad.meanLength, pad.meanPaddedLength), op, related: [] });
    }
    // A shuffle whose dataset size the source does not state: the library's count of its input, as run.
    const byId = new Map(v.graph.ops.map((o) => [o.id, o]));
    const byProfile = new Map(profile.ops.map((o) => [o.id, o]));
    for (const p of profile.ops) {
      if (p.kind !== 'shuffle') continue;
      const op = v.byProfileId.get(p.id);
      const buffer = p.knobs.bufferSize;
      const input = byProfile.get(p.inputs[0] ?? '');
      const size = input?.cardinality;
      if (!op || buffer === undefined || buffer <= 1 || size === undefined || !Number.isFinite(size)) continue;
      const graphInput = byId.get(op.inputs[0] ?? '');
      if (graphInput && staticSize(graphInput, byId) !== undefined) continue;
      add(smallShuffle(op, buffer, size, 'as the library counted it in the profiled run'));
    }
  }
  return out;
}
