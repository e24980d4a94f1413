/**
 * The run and profile a failed or not-yet-started run reports: zeros, the overrides asked for,
 * and the error. One definition for the child (which fills the run in as it measures) and the
 * parent (which reports a child that died without a word).
 */
import { PROFILE_VERSION } from '../shared/profile';
import type { Overrides, Profile, ProfileError, RunInfo } from '../shared/profile';
import { describeMachine } from './machine';

/** A run that measured nothing (yet). */
export function emptyRun(overrides: Overrides, endReason: RunInfo['endReason'] = 'error'): RunInfo {
  return {
    startedAt: new Date().toISOString(),
    elements: 0,
    seconds: 0,
    warmupElements: 0,
    warmupSeconds: 0,
    converged: false,
    endReason,
    rateEstimates: [],
    overrides,
    mainThreadCpuSeconds: 0,
    processCpuSeconds: 0,
    peakRssBytes: 0,
  };
}

/** The profile of a run that failed before it measured anything. */
export function failedProfile(file: string, exportName: string | undefined, overrides: Overrides, error: ProfileError): Profile {
  return {
    version: PROFILE_VERSION,
    pipeline: { file, exportName: exportName ?? '', rootId: '' },
    machine: describeMachine('wall'),
    run: emptyRun(overrides, error.kind === 'cancelled' ? 'cancelled' : 'error'),
    ops: [],
    error,
  };
}
