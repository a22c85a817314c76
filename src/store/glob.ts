/** SCAN's MATCH patterns: the store's scans and the listings of previous stores. */
/** A glob (SCAN MATCH) that matches the text literally. */
export function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** SCAN's MATCH as a regular expression: `*`, `?`, and `\\x` for a literal x (no classes: the plugin uses none). */
export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/\\(.)|([*?])|([.+^${}()|[\]\\])/gs, (_m, escaped?: string, wild?: string, special?: string) => {
    if (escaped !== undefined) return escaped.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    if (wild !== undefined) return wild === '*' ? '.*' : '.';
    return `\\${special!}`;
  });
  return new RegExp(`^${body}$`, 's');
}
