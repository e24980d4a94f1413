/** The training loop's section of `plumber profile` and `plumber plan` output (empty for a pipeline profile). */
import type { TrainerVerdict } from '../shared/analysis';
import type { Profile } from '../shared/profile';
import { analyze } from '../model';
import { renderTrainerProfile, renderTrainerVerdict } from './train';

/**
 * The loop's split and the verdict on it, each followed by a newline; '' when the profile is not a
 * training run. `verdict`: the plan's after verification (the loop as written and what the changes
 * verification kept do for it); else the model's on this profile.
 */
export function trainerText(profile: Profile, verdict?: TrainerVerdict): string {
  const split = renderTrainerProfile(profile);
  if (split === undefined) return '';
  const v = verdict ?? analyze(profile).trainer;
  return `\n${split}\n${v ? `${renderTrainerVerdict(v)}\n` : ''}`;
}
