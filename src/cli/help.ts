/** Help texts: one for the command line as a whole, one per command. */
import { OVERRIDE_KNOBS } from './overrides';

const COMMON = `Options for every command:
  --export NAME          the pipeline to run when the file exports several
  --seconds S            measurement budget after warm-up (default 3)
  --max-elements N       stop measuring after N root elements
  --warmup S             warm-up before counters are reset (default 0.5)
  --override OP=KNOB:VALUE
                         run with a knob changed, without editing the file (repeatable).
                         OP is an operator id as \`plumber plan\` prints it: line:column
                         (12:6) or path:line:column for another file (lib/decode.ts:3:10).
${Object.entries(OVERRIDE_KNOBS).map(([k, v]) => `                           ${k}: ${v}`).join('\n')}
  --timeout S            kill the run after S seconds in all (default: warm-up + budget + 40)
  --memory MB            heap limit of the pipeline's process
  --json                 print JSON on stdout (errors too, in an "error" field)
  --quiet                no progress on stderr
  -h, --help             this help`;

export const HELP: Record<string, string> = {
  main: `plumber — find and remove the bottleneck of a TypeScript input pipeline

Usage:
  plumber profile <file> [options]            run the pipeline on a sample and show what each operator did
  plumber plan <file> [options]               profile, then show the bottleneck and the changes that remove it
  plumber check <file> --min-rate R [options] exit 1 when the pipeline is slower than R elements/s (a CI gate)
  plumber fix <file> [--diff | --write]       profile, plan, and apply the plan to the source (a diff by default)
  plumber <command> --help                    options of one command
  plumber --version

A pipeline is an exported plumber-data dataset, or an exported function with no parameters that
returns one. The pipeline runs in a separate process with a time and memory limit.

Exit codes: 0 success, 1 the pipeline failed (or is below --min-rate), 2 wrong usage.`,
  profile: `Usage: plumber profile <file> [options]

Runs the pipeline for a short measured window and prints, per operator: its rate, main-thread and
worker time per element, async latency and where it runs. With --json, prints the profile.

${COMMON}`,
  plan: `Usage: plumber plan <file> [options]

Profiles the pipeline, then prints a table (operator, id, measured rate, CPU share, the rate it
allows, the bottleneck, the recommended change), the bottleneck's reason, the predicted rate after
the plan, and the --override flags that run the plan without editing the file. With --json,
prints { profile, analysis, plan }.

${COMMON}
  --passes N             profile runs in all: plan, re-run with the plan applied, plan again
                         (default 2; 1 is faster, the second run checks the first plan)
  --cores N              plan for N cores instead of this machine's
  --memory-budget MB     memory a cache may use (default: half the free memory)`,
  check: `Usage: plumber check <file> --min-rate R [options]

Profiles the pipeline and exits with 1 when its measured rate (root elements per second) is
below R, or when it fails; 0 otherwise. Meant for CI.

${COMMON}
  --min-rate R           the lowest acceptable rate, root elements per second (required)`,
};
