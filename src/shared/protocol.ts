/**
 * Custom LSP messages between the extension (client) and the language server, declared once as
 * typed `RequestType`/`NotificationType` constants (as vscode-eslint's customMessages.ts and
 * rust-analyzer's lsp_ext.ts do), so the compiler checks each method against its params and result
 * on both sides. Method names are `plumber/…`. Ranges and URIs are plain LSP shapes so both sides
 * can use them without importing vscode or ts-morph.
 *
 * The constants come from vscode-jsonrpc's common entry (no Node or browser transport), the one
 * copy both vscode-languageclient and vscode-languageserver resolve. jsonrpc compares a type's
 * `parameterStructures` by identity, so each side takes the constants from the bundle its own
 * connection lives in: the server's bundle, and on the client the language client bundle
 * (src/client/lsp.ts re-exports this module), which also keeps vscode-jsonrpc out of the
 * extension's activation bundle — the code there imports only this module's types.
 */
import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type { WorkspaceEdit } from 'vscode-languageserver-types';
import type { Analysis, Plan, PlanTarget } from './analysis';
import type { Profile } from './profile';
import type { TrainerReportLines } from './trainerWords';

export type { WorkspaceEdit };
export { Commands, type CommandId } from './commands';

/** An LSP position/range, structurally identical to vscode-languageserver-types'. */
export interface Position {
  line: number;
  character: number;
}
export interface Range {
  start: Position;
  end: Position;
}

/** How bad an operator's position is, for icons and sorting. */
export type OpSeverity = 'bottleneck' | 'warning' | 'ok' | 'unknown';

/** One operator in the Bottlenecks tree. */
export interface OpSummary {
  /** The operator's id as in profiles (`line:column` in the pipeline's file, 1-based). */
  id: string;
  kind: string;
  /** A short label such as `map(decode)`. */
  label: string;
  uri: string;
  range: Range;
  /** Measured elements per second at this operator; absent before a profile. */
  rate?: number;
  /** The same rate in the pipeline's unit (root elements per second: `rate` over the visit ratio). */
  rootRate?: number;
  /** Share of the pipeline's CPU (0..1). */
  cpuShare?: number;
  /** The root rate this operator allows (the model's per-operator bound). */
  bound?: number;
  severity: OpSeverity;
  /** One sentence: why this operator holds the pipeline back, if it does. */
  reason?: string;
  /** The title of the fix the plan proposes for it ("Apply Plumber fix: …"), if any. */
  fixTitle?: string;
  /** What its buffers hold at the pipeline's projected peak, in words (`opMemoryWords`); absent when it holds nothing. */
  memory?: string;
}

/**
 * How far a plan's advice can be trusted (from `Plan.verification`): `gain` measured faster than
 * as written beyond the spread; `no-gain` nothing measured reliably faster (no fix is offered);
 * `error` a verification run failed (no fix is offered); `unverified` the model's estimate only
 * (verification off); `none` the plan proposes nothing.
 */
export type AdviceVerdict = 'gain' | 'no-gain' | 'error' | 'unverified' | 'none';

/** One configuration verification measured, in words: what it applied and what it measured. */
export interface TriedConfig {
  /** "as written", or the titles of the changes it applied joined by " + ". */
  label: string;
  /** "310 el/s ± 12". */
  measured: string;
  /** Against as written: "1.7× ± 0.1" (absent for as written itself). */
  speedup?: string;
  /** The model's prediction for it: "520 el/s". */
  predicted?: string;
  /** True for the configuration the plan kept. */
  kept: boolean;
}

/** What the report shows of the plan's verification and the cores it planned for. */
export interface ReportAdvice {
  verdict: AdviceVerdict;
  /** The lens's words: "est. 1.8×, verified 1.7× ± 0.1", "no reliable gain on this machine right now". */
  headline: string;
  /** The verification's own sentence (`Verification.summary`), when verified. */
  summary?: string;
  /** "1.1 of 2 cores free: planning for 1" (`Analysis.coresNote`). */
  coresNote?: string;
  /** Every configuration measured, in the order it ran (as written first). */
  tried: TriedConfig[];
  /** Changes the model proposed that verification dropped, with why. */
  dropped: Array<{ title: string; why: string }>;
  /**
   * The plan's notes (`Plan.notes`), as `plumber plan` prints them: a change left out and why (a
   * cache after a random op, a move a later run measured slower), a cache the source has after a
   * random op.
   */
  notes: string[];
  /** Wall seconds the verification runs took. */
  seconds?: number;
}

/** One pipeline in a document. */
export interface PipelineSummary {
  uri: string;
  /** Export name (`default` for a default export), or a synthetic name for an unexported chain. */
  name: string;
  /** The range of the pipeline's head (first line of the chain). */
  range: Range;
  /** Operators, most limiting first once profiled, else in chain order. */
  ops: OpSummary[];
  /** Measured root rate of the last profile. */
  rate?: number;
  /** The model's bound with the current knobs. */
  bound?: number;
  /** The model's predicted rate with every fix applied. */
  predictedRate?: number;
  /** How far the plan can be trusted; absent before a successful profile. */
  verdict?: AdviceVerdict;
  /** The plan's figure in the lens's words ("est. 1.8×, verified 1.7× ± 0.1"); absent when the plan proposes nothing. */
  advice?: string;
  /** The measured speed-up of the kept changes with its half-width, when verification found a gain. */
  verified?: { speedup: number; halfWidth: number };
  /** The plan's target machine when it is for other cores than here (`plumber.model.cores`): the tree labels its figure with it. */
  target?: PlanTarget;
  /** The file changed since the profile was taken. */
  stale: boolean;
  /** The pipeline's projected peak memory as written, in words (`peakMemoryWords`). */
  memory?: string;
  /** What the pipeline counts, plural (`el`, `batches`): the unit of `rate`, `bound` and each op's `rootRate` and `bound`. */
  unit?: string;
  /** The last profile failed: the message to show. */
  error?: string;
  /**
   * When the last profile was a training run (and the file has not changed since): the loop's
   * verdict in words (`trainerReportLines`): the lens's glance line ("trainer 38 steps/s · waits
   * 62% on input · plan: +55%"), the model's sentence, the target rate and what the plan does.
   */
  trainer?: TrainerReportLines;
  /** ISO time of the last profile. */
  profiledAt?: string;
}

export interface PipelinesParams {
  uri?: string;
}
export interface PipelinesResult {
  pipelines: PipelineSummary[];
}
/** client → server request: the pipelines of one document, or of every open document when `uri` is absent. */
export const PipelinesRequest = new RequestType<PipelinesParams, PipelinesResult, void>('plumber/pipelines');

export interface ProfileParams {
  uri: string;
  /** Export name; all pipelines of the document when absent. */
  pipeline?: string;
  /** LSP work-done token for progress (set by the client library). */
  workDoneToken?: string | number;
}
export interface ProfileOutcome {
  pipeline: string;
  ok: boolean;
  /** Measured root rate, when ok. */
  rate?: number;
  /** Predicted rate after the plan, when ok. */
  predictedRate?: number;
  /** What went wrong, in a sentence, when not ok. */
  error?: string;
}
export interface ProfileResult {
  outcomes: ProfileOutcome[];
}
/**
 * client → server request: run the runner on one pipeline (or all pipelines of a document) with
 * cancellable work-done progress. Refused with a message when the workspace is untrusted.
 */
export const ProfileRequest = new RequestType<ProfileParams, ProfileResult, void>('plumber/profile');

export interface ReportParams {
  uri: string;
  pipeline: string;
}
export interface ReportHistoryEntry {
  at: string;
  rate: number;
  bound: number;
  predictedRate?: number;
  /** Short description of the knobs at the time, e.g. "map(decode) ×2, prefetch 4". */
  label: string;
}
export interface ReportResult {
  pipeline: PipelineSummary;
  profile?: Profile;
  analysis?: Analysis;
  plan?: Plan;
  /** Ids of operators on the critical path (the chain from source to root through the bottleneck). */
  criticalPath: string[];
  history: ReportHistoryEntry[];
  /** The plan's verification and cores note in words, once profiled. */
  advice?: ReportAdvice;
}
/** client → server request: everything the report view shows for one pipeline. */
export const ReportRequest = new RequestType<ReportParams, ReportResult, void>('plumber/report');

export interface FixAllParams {
  uri: string;
  pipeline?: string;
}
/** The edit for every fix of a plan; absent with `reason` when no fix applies. */
export interface FixAllResult {
  /** documentChanges carrying the version the offsets were computed on (a client refuses it if the file moved on). */
  edit?: WorkspaceEdit;
  title?: string;
  reason?: string;
}
/** client → server request: the edit that applies every fix of the plan for one pipeline (or all in the document). */
export const FixAllRequest = new RequestType<FixAllParams, FixAllResult, void>('plumber/fixAll');

export interface ClearProfileParams {
  uri?: string;
}
/** client → server request: forget the profiles of one document, or of all documents. */
export const ClearProfileRequest = new RequestType<ClearProfileParams, null, void>('plumber/clearProfile');

export interface ProfileUpdatedParams {
  uri: string;
  pipelines: string[];
}
/** server → client notification: profiles of a document changed (new, stale, cleared); refresh views. */
export const ProfileUpdatedNotification = new NotificationType<ProfileUpdatedParams>('plumber/profileUpdated');

export interface TrustChangedParams {
  trusted: boolean;
}
/** client → server notification: the workspace's trust changed (the server runs no code while untrusted). */
export const TrustChangedNotification = new NotificationType<TrustChangedParams>('plumber/trustChanged');
