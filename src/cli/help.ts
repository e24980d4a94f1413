/** Help texts: one for the command line as a whole, one per command. */
import { realpathSync } from 'node:fs';
import { OVERRIDE_KNOBS } from './overrides';

const COMMON = `Options for every command:
  --export NAME          the pipeline to run when the file exports several
  --seconds S            measurement budget after warm-up (default 3)
  --max-elements N       stop measuring after N root elements
  --warmup S             warm-up before counters are reset (default 0.5)
  --start S              the longest wait for the first element (default 10): a large shuffle
                         buffer or a slow source may need more
  --override OP=KNOB:VALUE
                         run with a knob changed, without editing the file (repeatable).
                         OP is an operator id as \`plumber plan\` prints it: line:column
                         (12:6) or path:line:column for another file (lib/decode.ts:3:10).
${Object.entries(OVERRIDE_KNOBS)
  .map(([k, v]) => `                           ${k}: ${v}`)
  .join('\n')}
  --timeout S            kill the run after S seconds in all (default: start + warm-up + budget + 30)
  --memory MB            heap limit of the pipeline's process (512, or 2GB)
  --train                the file is a training script: run it as written and watch its loop
                         (recognised without the flag when it iterates a dataset as it loads)
  --json                 print JSON on stdout (errors too, in an "error" field)
  --quiet                no progress on stderr
  -h, --help             this help
Numbers are written in decimal digits (1000, 0.5): 1e3 and 0x10 are refused.`;

const PLAN_OPTIONS = `  --passes N             profile runs before verification: plan, re-run with the plan applied
                         (a cache alone first: what runs after it is planned from that run),
                         plan again (default 2; 1 is faster)
  --budget S             seconds the whole diagnosis aims for (default 15): verification takes
                         what the passes leave, always measures the plan beside as written, and
                         gives a second pair of runs up to 10 s when the load drifted during the
                         first or its runs measured different stretches of the data
  --no-verify            keep the model's plan without measuring it against the pipeline as
                         written (faster; the figure is then only an estimate)
  --cores N              plan for N cores (default: the cores free while the pipeline ran)
  --memory-budget MB     the most the plan's projected peak may reach (512, or 1.5GB; default: half the smaller of free memory and the heap limit)
  --cache-dir DIR        where a cache too large for the memory budget goes on disk, relative to
                         the pipeline file's directory (default .cache/plumber)
  --max-in-flight N      the most calls in flight the plan gives an awaiting operator, and inner
                         datasets an interleave pulls at once (default 256): for a database or an
                         API that should not get more concurrent requests
  --target-rate N        a root rate that is enough (el/s): the plan stops there, and says how many
                         cluster workers a stage on a cluster needs to reach it`;

export const HELP: Record<string, string> = {
  main: `plumber — find and remove the bottleneck of a TypeScript input pipeline

Usage:
  plumber profile <file> [options]            run the pipeline on a sample and show what each operator did
  plumber plan <file> [options]               profile, then show the bottleneck and the changes that remove it
  plumber check <file> --min-rate R [options] a CI gate: exit 1 below R/s (batches/s after a batch)
  plumber check <file> --baseline FILE        a CI gate: exit 1 when reliably slower than a stored run
  plumber check <file> --save-baseline FILE   store this run as the baseline to compare with
  plumber fix <file> [--diff | --write]       the same plan, verified, applied to the source (a diff by default)
  plumber lint [files|globs…] [options]       the editor's lint rules, without running anything (CI, SARIF)
  plumber <command> --help                    options of one command
  plumber --version

Examples:
  plumber plan src/pipeline.ts
  plumber lint                                 every pipeline of the workspace's TypeScript
  plumber lint 'src/**/*.ts' --format sarif > plumber.sarif
  plumber check src/pipeline.ts --save-baseline plumber-baseline.json
  plumber check src/pipeline.ts --baseline plumber-baseline.json --max-slowdown 10%

A pipeline is an exported plumber-data dataset, or an exported function with no parameters that
returns one; a training script that iterates a dataset itself is run as written, and the plan
then targets what the trainer needs. The pipeline runs in a separate process with a time and
memory limit.

Exit codes: 0 success, 1 the pipeline failed (or is below --min-rate, or reliably slower than its
baseline), 2 wrong usage, 3 \`check\` measured too few elements for a rate, 4 \`check --baseline\`
cannot compare this run with the baseline, 128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM).`,
  profile: `Usage: plumber profile <file> [options]

Runs the pipeline for a short measured window and prints, per operator: its rate, main-thread and
worker time per element, async latency and where it runs. With --json, prints the profile.

${COMMON}`,
  plan: `Usage: plumber plan <file> [options]

Profiles the pipeline, plans, re-profiles with the plan and plans again, then verifies the plan:
runs as written and with the plan in turns and keeps only changes that measured faster beyond the
spread of repeated measurements. Prints a table (operator, id, measured rate, CPU share, the rate
it allows, the bottleneck, the recommended change), the cores planned for, the bottleneck's
reason, the figure ("est. 1.8×, verified 1.7× ± 0.1", or "No reliable gain on this machine right
now"), the changes verification dropped and why, and the --override flags that run the plan
without editing the file. With --json, prints { profile, analysis, plan } (plan.verification holds
every configuration measured).

${COMMON}
${PLAN_OPTIONS}`,
  fix: `Usage: plumber fix <file> [options] [--diff | --write] [--from-profile profile.json]

Makes the same plan as \`plumber plan\` with the same options (profile, passes, verification) and
applies the changes verification kept to the source: a unified diff on stdout (the default), or
the files written in place. Finds the pipeline the way \`plan\` does (exported datasets, factories,
builder functions and class methods behind them).

${COMMON}
${PLAN_OPTIONS}
  --diff                 print the changes as a unified diff (the default)
  --write                write the changed files in place
  --from-profile FILE    plan from a saved profile (plumber profile --json > FILE) instead of
                         running: one pass, and nothing can be verified`,
  lint: `Usage: plumber lint [files|directories|globs…] [options]

Reads every pipeline of the files (with none: the files the project's tsconfig.json includes, or
every TypeScript file, less what git ignores) and prints what the editor's lint rules find, one
line each: file:line:col  severity  rule  message. Nothing is run. Exit codes: 0 no finding at or
above --max-severity, 1 some (or a file could not be read), 2 wrong usage.

  --format F             text (default), json, sarif (SARIF 2.1.0, for code scanning) or github
                         (workflow commands: annotations on a pull request's lines)
  --json                 the same as --format json
  --max-severity S       the least severe finding that fails: warning (default) or information
  --rule R               only this rule (repeatable, or R1,R2); plumber/ may be left out
  --ignore-rule R        never this rule (repeatable)
  --profile FILE         a stored profile (plumber profile --json > FILE): adds the measured rules
                         (padding-waste, shuffle-buffer-small sized by the run) on the pipeline it ran
  --cores N              the cores workers-above-cores counts (default: this machine's)
  -h, --help             this help

Silence a finding where it is deliberate, in the editor and here alike:
  // plumber-disable-next-line cache-after-random, shuffle-after-batch -- why
  ds.prefetch(0); // plumber-disable-line noop-buffer
  // plumber-disable no-prefetch-at-end          (anywhere: the whole file; no rule: every rule)

Examples:
  plumber lint
  plumber lint src/pipeline.ts --rule cache-after-random
  plumber lint 'src/**/*.ts' --format github --max-severity information
  plumber profile src/pipeline.ts --json > profile.json && plumber lint src/pipeline.ts --profile profile.json`,
  check: `Usage: plumber check <file> (--min-rate R | --baseline FILE | --save-baseline FILE) [options]

A gate for CI. Profiles the pipeline and exits with 1 when it fails, when its measured rate (root
elements per second, batches per second after a batch) is below --min-rate, or when it is reliably
slower than a stored baseline by more than --max-slowdown; 0 otherwise.

Against a baseline, the rate of this run ÷ the baseline's is printed with its 95% interval, from
both runs' window slices (the statistics plan verification uses). The run fails only when the
interval's upper end is below 1 − the slowdown allowed: a slower run on a noisy machine does not
fail by chance. When the runs cannot be compared (another core count or CPU model, a busy machine:
load average of other work ≥ the cores, or noise wider than the slowdown allowed), it says why and
exits with 4 (1 with --strict).

Examples:
  plumber check src/pipeline.ts --save-baseline plumber-baseline.json    # once; commit the file
  plumber check src/pipeline.ts --baseline plumber-baseline.json --max-slowdown 10%
  plumber check src/pipeline.ts --baseline plumber-baseline.json --format junit > plumber.xml
  plumber check src/pipeline.ts --min-rate 500

${COMMON}
  --min-rate R           the lowest acceptable rate, root elements per second
  --baseline FILE        compare with the run stored in FILE (made by --save-baseline)
  --max-slowdown P       the slowdown allowed against the baseline: 10% (the default) or 0.1
  --save-baseline FILE   store this run (window slices, machine, configuration) in FILE
  --max-load L           the load average of other work from which a machine counts as busy and
                         its run as not comparable (default: its cores)
  --strict               runs that cannot be compared fail (exit 1) instead of exiting with 4
  --format F             text (the default), json (as --json), junit (JUnit XML: one testcase per
                         pipeline) or github (::error file=…:: annotations for GitHub Actions)`,
};

/** What `commandName` looks at: how this process was started and what the shell would find. */
export interface Invocation {
  /** The script node ran (`process.argv[1]`). */
  script: string;
  cwd: string;
  /** `process.env.PATH`. */
  path: string;
  /** The real path of a file, or undefined when it does not exist. */
  realpath(file: string): string | undefined;
}

/**
 * The command a person types to run this CLI again, so a printed hint runs as printed: `plumber`
 * when a `plumber` on PATH (outside a project's `node_modules/.bin`, which only npm scripts and npx
 * put on PATH) is this very script — a global install or `npm link`; `npx plumber` when the script
 * is a package installed in a project's `node_modules`; else `node <script>` relative to the
 * working directory (a checkout of Plumber itself).
 */
export function commandName(inv: Invocation): string {
  const self = inv.realpath(inv.script) ?? inv.script;
  const sep = inv.script.includes('\\') ? '\\' : '/';
  for (const dir of inv.path.split(sep === '\\' ? ';' : ':')) {
    if (!dir || /node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
    const found = inv.realpath(`${dir.replace(/[\\/]$/, '')}${sep}plumber`);
    if (found !== undefined && found === self) return 'plumber';
  }
  if (/[\\/]node_modules[\\/]/.test(self)) return 'npx plumber';
  const rel = self.startsWith(inv.cwd + sep) ? self.slice(inv.cwd.length + 1) : self;
  return `node ${/\s/.test(rel) ? JSON.stringify(rel) : rel}`;
}

/** How this process was started, for `commandName`. */
export function thisInvocation(): Invocation {
  return {
    script: process.argv[1] ?? 'plumber',
    cwd: process.cwd(),
    path: process.env['PATH'] ?? '',
    realpath: (file) => {
      try {
        return realpathSync(file);
      } catch {
        return undefined;
      }
    },
  };
}
