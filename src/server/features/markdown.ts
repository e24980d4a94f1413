/**
 * Untrusted text in markdown. Operator labels, function names, knob expressions, error messages and
 * the model's sentences (which quote labels) come from the workspace's source or from what its
 * code printed, and the workspace may be untrusted (Restricted Mode still shows hovers). Every
 * piece of such text goes into a MarkupContent through one of these helpers, so it renders as the
 * characters it is and never as a live link, an image, HTML or formatting.
 */

/**
 * The characters CommonMark and GFM give meaning to that untrusted text could use: links and
 * images (`[` `]` `!`), autolinks and HTML (`<` `>`), bare URL and e-mail autolinks (`:` `@` `.`,
 * which GFM needs literally in `http://`, `www.` and `a@b.co`), entities (`&`), emphasis and code
 * (`*` `_` `~` `` ` ``), block markers (`#` `+` `-` `|`), braces and the escape character itself.
 * Each is ASCII punctuation, so a backslash before it is a valid escape that renders the character
 * alone. Parentheses stay as they are: without an unescaped `]` before them they form no link.
 */
const SPECIAL = /[\\`*_{}[\]<>#+\-.!|~:@&]/g;

/** `text` as literal markdown inline text: special characters escaped, line breaks as spaces. */
export function escapeMarkdown(text: string): string {
  return text.replace(/\r\n?|\n/g, ' ').replace(SPECIAL, (c) => `\\${c}`);
}

/**
 * `text` as a markdown code span. Inside a code span nothing is live, so the only danger is text
 * that closes it early: the fence is one backtick longer than the longest run of backticks in the
 * text (CommonMark), padded with spaces when the text starts or ends with a backtick.
 */
export function codeSpan(text: string): string {
  const flat = text.replace(/\r\n?|\n/g, ' ');
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}
