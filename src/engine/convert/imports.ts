/**
 * The import the converted chain needs, written the way the file already imports: an ES `import`
 * after its last import, or a `require` after its last top-level `require` (a file with neither
 * gets an `import` when it is written with ES syntax), so that the rest of the file stays byte for
 * byte as it was.
 */
import type { PlannedEdit } from '../fixes/edits';

const ESM_IMPORT = /^import\s[^;]*?from\s*(['"])[^'"\n]+\1[ \t]*;?|^import\s*(['"])[^'"\n]+\2[ \t]*;?/gm;
const CJS_REQUIRE = /^(?:const|let|var)\s[^;\n]*?=\s*require\(\s*(['"])[^'"\n]+\1\s*\)[^;\n]*;?/gm;

/** The end offset of the last match of `re` in `text`, if any. */
function lastEnd(re: RegExp, text: string): number | undefined {
  let end: number | undefined;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) end = m.index + m[0].length;
  return end;
}

/** Why `names` cannot be brought into the file under their own names (the file declares one already), or undefined. */
export function nameClash(text: string, names: string[]): string | undefined {
  for (const name of names) {
    const declared = new RegExp(`\\b(?:function\\*?|const|let|var|class)\\s+${name}\\b|[{,]\\s*(?:[\\w$]+\\s+as\\s+)?${name}\\s*[,}]`);
    if (declared.test(text)) return `The file already declares a \`${name}\`; the converted chain needs plumber-data's under that name.`;
  }
  return undefined;
}

/** The edit adding `names` from plumber-data to the file `text` (ESM when the file uses `import`, else `require`). */
export function importEdit(file: string, text: string, names: string[], moduleKind: 'esm' | 'cjs'): PlannedEdit {
  const esmEnd = lastEnd(ESM_IMPORT, text);
  const cjsEnd = lastEnd(CJS_REQUIRE, text);
  // ES syntax (`import`, or `export` with no `require`) takes an import whatever the file compiles to.
  const esm = esmEnd !== undefined || (cjsEnd === undefined && (moduleKind === 'esm' || /^export\s/m.test(text)));
  const line = esm ? `import { ${names.join(', ')} } from 'plumber-data';` : `const { ${names.join(', ')} } = require('plumber-data');`;
  const after = esm ? esmEnd : cjsEnd;
  if (after !== undefined) return { file, start: after, end: after, newText: `\n${line}` };
  // No import yet: the first line, after a shebang or a 'use strict' directive.
  const head = /^(#![^\n]*\n)?((['"])use strict\3;?[ \t]*\n)?/.exec(text)?.[0].length ?? 0;
  return { file, start: head, end: head, newText: `${line}\n` };
}
