/**
 * The subject of an upstream's SET, in either place upstreams put it: SSF
 * 1.0's top-level `sub_id` (RFC 9493 Subject Identifiers), or the RISC
 * profile's `subject` inside the event (with `format`, or the older
 * `subject_type` Google's Cross-Account Protection sends: `iss-sub`).
 */

/** Whom an upstream names: its `sub` (with the issuer that gave it), or an address it verified. */
export type UpstreamSubject = { iss: string; sub: string } | { email: string };

const text = (value: unknown, max = 1024): value is string => typeof value === 'string' && value.length > 0 && value.length <= max;

/**
 * The subject of one RFC 9493 identifier: `iss_sub` (or RISC's `iss-sub`)
 * and `email`; a `phone_number`, `opaque`, `account` or any other format
 * names nobody here (links keep the upstream's `sub`). `aliases` (RFC 9493
 * section 3.2.1) gives the first of its identifiers that names someone.
 */
export function subjectOf(id: unknown): UpstreamSubject | undefined {
  if (typeof id !== 'object' || id === null || Array.isArray(id)) return undefined;
  const record = id as Record<string, unknown>;
  const format = record.format ?? record.subject_type;
  if ((format === 'iss_sub' || format === 'iss-sub') && text(record.iss) && text(record.sub)) return { iss: record.iss, sub: record.sub };
  if (format === 'email' && text(record.email, 320)) return { email: record.email };
  if (format === 'aliases' && Array.isArray(record.identifiers)) {
    for (const alias of record.identifiers.slice(0, 10)) {
      const found = subjectOf(alias);
      if (found) return found;
    }
  }
  return undefined;
}

/** The SET's subject: the top-level `sub_id` first (SSF 1.0), else the event's own `subject` (RISC). */
export function setSubject(payload: Record<string, unknown>, event: Record<string, unknown>): UpstreamSubject | undefined {
  return payload.sub_id !== undefined ? subjectOf(payload.sub_id) : subjectOf(event.subject);
}
