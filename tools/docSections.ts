/**
 * Generated sections of the documentation: the text between `<!-- generated:<name> -->` and
 * `<!-- /generated:<name> -->` is rendered from code or figures, never edited by hand. The docs test checks
 * each section against its rendering (`npm run docs:update` rewrites them), and the benchmark rewrites the ones
 * rendered from its figures.
 */

/** `text` with each named section's body replaced; throws when a section's markers are missing. */
export function withGeneratedSections(text: string, sections: Record<string, string>, file: string): string {
  let out = text;
  for (const [name, body] of Object.entries(sections)) {
    const pattern = new RegExp(`(<!-- generated:${name} -->)[\\s\\S]*?(<!-- /generated:${name} -->)`);
    if (!pattern.test(out)) throw new Error(`${file} lacks the markers of section ${name}`);
    // A function, not a replacement string: a body may hold `$` (prices), which a string would expand.
    out = out.replace(pattern, (_match, begin: string, end: string) => `${begin}\n${body}\n${end}`);
  }
  return out;
}
