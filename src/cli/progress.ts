/**
 * Progress on stderr while a pipeline runs: one live line on a terminal, plain lines (one per
 * phase, then one a second) when stderr is piped to a file or a CI log.
 */
import type { RunnerMessage } from '../shared/profile';
import { formatCount, formatElapsed, terminalRate } from '../shared/words';

type Progress = Extract<RunnerMessage, { type: 'progress' }>;

/** The live rate, or nothing while there is none. */
function rateSoFar(r: number | undefined): string {
  return r === undefined || !Number.isFinite(r) ? '' : terminalRate(r);
}

export class ProgressReporter {
  private lastPhase = '';
  private lastPlain = 0;
  private lineShown = false;
  private readonly tty: boolean;

  constructor(
    private readonly label: string,
    private budgetSeconds: number,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly quiet = false,
  ) {
    this.tty = Boolean(stream.isTTY);
  }

  update(m: Progress): void {
    if (this.quiet) return;
    const what = `${this.label}: ${m.phase}`;
    const details = m.phase === 'loading' ? '' : ` ${formatElapsed(m.seconds)}, ${formatCount(m.elements)} elements ${rateSoFar(m.rate)}`.trimEnd();
    if (this.tty) {
      const width = 24;
      const frac = m.phase === 'measuring' ? Math.min(1, m.seconds / Math.max(this.budgetSeconds, 1e-9)) : 0;
      const bar = m.phase === 'measuring' ? ` [${'#'.repeat(Math.round(frac * width)).padEnd(width, '.')}]` : '';
      const line = `${what}${bar}${details}`;
      const cols = this.stream.columns || 100;
      this.stream.write(`\r\x1b[2K${line.slice(0, cols - 1)}`);
      this.lineShown = true;
      return;
    }
    const now = Date.now();
    if (m.phase !== this.lastPhase || now - this.lastPlain >= 1000) {
      this.stream.write(`${what}${details}\n`);
      this.lastPhase = m.phase;
      this.lastPlain = now;
    }
  }

  /** Says the run waits for another Plumber run on this machine (pid -1: one that is starting). */
  waiting(pid: number): void {
    if (this.quiet) return;
    this.clear();
    this.stream.write(`${this.label}: waiting for another Plumber run${pid > 0 ? ` (pid ${pid})` : ''} to finish, so that the two do not share the cores\n`);
    this.lastPhase = '';
  }

  /** The measurement budget of the runs from now on (a verification run measures less than a profile). */
  budget(seconds: number): void {
    this.budgetSeconds = seconds;
  }

  /** One line per step of a diagnosis ("run 3: verifying: the plan"), on a line of its own. */
  step(message: string): void {
    if (this.quiet) return;
    this.clear();
    this.stream.write(`${this.label}: ${message}\n`);
    // The next run's phases are new again, so piped output shows each of them.
    this.lastPhase = '';
  }

  /** Clears the live line so other output starts on a clean line. */
  clear(): void {
    if (this.tty && this.lineShown) {
      this.stream.write('\r\x1b[2K');
      this.lineShown = false;
    }
  }
}
