/** The fns the fault scenarios' workers serve (bench:cluster -- --faults): each misbehaves on element 50 only. */

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** 40 ms of awaited work: long enough that jobs are in flight when a fault strikes. */
export async function fortyMs(x: number): Promise<number> {
  await sleep(40);
  return x;
}

/** Ends its worker's process on 50. */
export async function exitsOnFifty(x: number): Promise<number> {
  if (x === 50) process.exit(7);
  await sleep(5);
  return x;
}

/** Throws on 50. */
export async function throwsOnFifty(x: number): Promise<number> {
  if (x === 50) throw new RangeError('fifty is not allowed');
  await sleep(5);
  return x;
}

/** Allocates on 50 until its worker's heap runs out (the scenario gives workers a small heap). */
export async function oomOnFifty(x: number): Promise<number> {
  if (x === 50) {
    const hog: number[][] = [];
    for (;;) hog.push(new Array(1e6).fill(x));
  }
  await sleep(5);
  return x;
}

/** Never settles on 50. */
export async function hangsOnFifty(x: number): Promise<number> {
  if (x === 50) await new Promise(() => undefined);
  await sleep(5);
  return x;
}
