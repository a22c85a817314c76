/**
 * `oidc-signout-notify/pages`: what a host needs to build pages of its own
 * (sign-in interactions, console sections, letters) in the service's look
 * and with its safety: the layout with its CSP, escaping, the languages,
 * forms with a size limit and CSRF tokens, the origin check, the error pages
 * and the plugin's errors, who is signed in, the console's parts and the
 * letter frame. The reference provider (`npm start`) builds its pages with
 * these alone. No side effects on import.
 *
 * Exports whose source has no doc comment are declared here with one, so an
 * editor shows it.
 */
import * as text from './text/html.ts';
import * as i18n from './i18n/index.ts';
import type * as errorCodes from './http/error-codes.ts';
import type * as csrf from './http/csrf.ts';
import type * as errorPage from './http/error-page.ts';
import * as layout from '../views/layout.ts';

// ---- the page and its safety -----------------------------------------------

/** A rendered page: its HTML and the Content-Security-Policy that lets exactly its styles, scripts and forms work. */
export type Page = layout.Page;

/** What a page is made of: `renderPage`'s input. */
export type PageInput = Parameters<typeof layout.renderPage>[0];

/**
 * The service's page around `main`: the language and direction on `<html>`,
 * the service's name in the header (and `headerAside` beside it), the one
 * stylesheet every page shares, and a CSP that allows only that stylesheet,
 * the listed inline scripts (by hash) and script files (by exact URL), and
 * forms to the service and the `formAction` origins. Send it with `sendPage`.
 */
export const renderPage: (input: PageInput) => Page = layout.renderPage;

/** The hidden `csrf` field of a form (its token from `createCsrf`). */
export const csrfField: typeof layout.csrfField = layout.csrfField;

/** A field's or a form's error: an alert paragraph with `id`, for `aria-describedby`; nothing without a message. */
export const errorMessage: typeof layout.errorMessage = layout.errorMessage;

export { decisionForm, describedBy, formTargets } from '../views/layout.ts';
export { sendPage } from './http/page.ts';

// ---- escaping ----------------------------------------------------------------

/** Markup that is safe as it is: what `html` returns; anything else put in a page is escaped. */
export type SafeHtml = text.SafeHtml;

/** What `html` and `fillHtml` take: text and numbers (escaped), `SafeHtml` (as it is), lists of these; null, undefined and false are nothing. */
export type HtmlValue = text.HtmlValue;

/** The template tag of every page: each value is escaped unless it is `SafeHtml` (another `html` result). */
export const html: typeof text.html = text.html;

/**
 * A translated sentence with markup around its `{placeholders}`
 * (`<strong>{email}</strong>`) without trusting the translation: its text is
 * escaped, the values are rendered as `html` renders them.
 */
export const fillHtml: typeof text.fillHtml = text.fillHtml;

export { neutralizeLinks } from './text/neutralize-links.ts';
export type { TextPlace } from './text/neutralize-links.ts';

// ---- languages -------------------------------------------------------------

/** A language the service speaks (`en`, `de`, `fr`, `ar`). */
export type Locale = i18n.Locale;

/** The name of a sentence in the service's catalog. */
export type MessageKey = i18n.MessageKey;

/** The sentence `key` in `locale` (English where the locale lacks it), with `{name}` placeholders filled from `params`. */
export const t: typeof i18n.t = i18n.t;

/**
 * The reader's language: `preferred` (the account's choice), else the first
 * of `ui_locales` the service speaks, else Accept-Language by its q-values,
 * else `fallback` (English).
 */
export const negotiateLocale: typeof i18n.negotiateLocale = i18n.negotiateLocale;

/** `rtl` for a right-to-left language (Arabic), else `ltr`: for `dir` attributes outside `renderPage`. */
export const direction: typeof i18n.direction = i18n.direction;

// ---- forms, errors and who is signed in ------------------------------------

/** CSRF tokens bound to a purpose and what the form acts on: `token(purpose, binding)`, `verify(...)` (throws `form_expired`). */
export type Csrf = csrf.Csrf;

/** The name of one of the plugin's errors in its catalog, which gives its code, status and page sentence: `PluginError`'s first argument. */
export type ErrorName = errorCodes.ErrorName;

/** Where an error page sends the reader on: the service's name and issuer (for the console link), the site and the language when known. */
export type ErrorPageContext = errorPage.ErrorPageContext;

/** Any Koa context the helpers take: a plain one, a router's (with its state and params), or oidc-provider's. */
export type { HttpContext } from './http/context.ts';

export { readForm } from './http/body.ts';
export { createCsrf } from './http/csrf.ts';
export { sameOrigin } from './http/origin.ts';
export { crossOrigin, PluginError } from './http/errors.ts';
export { errorSentence, htmlErrors, sendErrorPage } from './http/error-page.ts';
export { signedInAccount } from './console/session.ts';

// ---- console sections and letters -----------------------------------------

export { accountBar, bdi, buttonForm, noticeBanner, path, timeTag, tx } from '../views/console/parts.ts';
export { automatedLetterHeaders, letterDocument } from '../views/letters/shell.ts';
export type { Letter as RenderedLetter } from '../views/letters/shell.ts';
