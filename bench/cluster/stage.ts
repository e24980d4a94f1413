/** The benchmark's stage: 20 ms of awaited work per element (a remote call, a GPU, a disk on another host), so the local cores are not what limits it. */
export async function awaitTwenty(x: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 20));
  return x + 1;
}
