// Prettier: the house style as it is written (single quotes, semicolons, trailing commas, long
// lines). `npm run format` writes it; `npm run format:check`, part of `npm test`, fails on a file
// that differs. What it leaves alone is in .prettierignore.
/** @type {import('prettier').Config} */
export default {
  singleQuote: true,
  // The tree's lines run long (one in a hundred passes 170 characters): a narrower width would
  // rewrap most files.
  printWidth: 220,
  overrides: [
    // JSON Schemas keep JSON.stringify's layout, one array item a line, as package.json does.
    { files: '*.schema.json', options: { parser: 'json-stringify' } },
  ],
};
