/**
 * Workspace trust as the client states it. Trust lets the server run workspace code (the runner),
 * so it is granted only by the JSON value `true`: a string "false", a number or an object is a
 * client bug, and a bug must fail closed, never open.
 */

/**
 * Trust from `initializationOptions`. A client that sends no `trusted` key has no Workspace Trust
 * (Neovim, a plain LSP client that started the server itself) and is trusted; a client that sends
 * the key trusts only with a boolean `true`.
 */
export function trustFromInit(init: unknown): boolean {
  if (init === null || typeof init !== 'object' || !('trusted' in init)) return true;
  return (init as { trusted: unknown }).trusted === true;
}

/** Trust from a `plumber/trustChanged` notification: only a boolean `true` trusts. */
export function trustFromNotification(params: unknown): boolean {
  return params !== null && typeof params === 'object' && (params as { trusted?: unknown }).trusted === true;
}
