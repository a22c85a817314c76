/** A logger that keeps what it is told, for tests that read the plugin's log lines. */
export interface LogLine { level: 'info' | 'warn' | 'error'; message: string; fields?: Record<string, unknown> | undefined }

/** The host's logger shape (info, warn, error), each call pushed onto `lines`. */
export function logTo(lines: LogLine[]) {
  const at = (level: LogLine['level']) => (message: string, fields?: Record<string, unknown>) => { lines.push({ level, message, fields }); };
  return { info: at('info'), warn: at('warn'), error: at('error') };
}
