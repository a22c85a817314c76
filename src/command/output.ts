/**
 * What the command prints: on stdout one JSON document (`--json`) or text
 * for a person, and nothing else (the host module's logs and the progress
 * go to stderr); never a token, a secret or a stack.
 */
export interface Io {
  /** The real stdout: only the result goes there. */
  out: (text: string) => void;
  /** stderr: progress, logs, and the error's words in text mode. */
  err: (text: string) => void;
}

export interface Output {
  readonly json: boolean;
  /** The result: the document, or its text. */
  result(document: Record<string, unknown>, text: string): void;
  /** A line of progress on stderr (JSON lines with --json). */
  progress(document: Record<string, unknown>, text: string): void;
  /** A refusal or failure: `{ error, error_description }` on stdout with --json, the words on stderr otherwise. */
  error(error: string, description: string, extra?: Record<string, unknown>): void;
}

export function output(json: boolean, io: Io): Output {
  return {
    json,
    result(document, text) {
      io.out(json ? `${JSON.stringify(document)}\n` : `${text}\n`);
    },
    progress(document, text) {
      io.err(json ? `${JSON.stringify(document)}\n` : `${text}\n`);
    },
    error(error, description, extra = {}) {
      if (json) io.out(`${JSON.stringify({ error, error_description: description, ...extra })}\n`);
      else io.err(`oidc-signout-notify: ${description}\n`);
    },
  };
}

/** A count as people read it (12,345). */
export const n = (value: number): string => value.toLocaleString('en-US');
