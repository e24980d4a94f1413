/**
 * The member a module exports under `name`: its own property, else its default export's own
 * property. Never a member every object inherits (`constructor`, `toString`, `__proto__`): a name
 * given as an export is looked up as the module wrote it, so `exportName: 'constructor'` finds
 * nothing instead of running `Object` on every element.
 */
export function exportedMember(mod: Record<string, unknown>, name: string): unknown {
  const own = Object.hasOwn(mod, name) ? mod[name] : undefined;
  if (own !== undefined && own !== null) return own;
  const d = mod.default;
  return d !== null && (typeof d === 'object' || typeof d === 'function') && Object.hasOwn(d, name) ? (d as Record<string, unknown>)[name] : undefined;
}
