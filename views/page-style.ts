/**
 * The one style sheet of every page (inline, allowed by its hash in the
 * CSP: ./layout.ts): the service's pages, the console's classes and the
 * sites and devices cards.
 */
import { createHash } from 'node:crypto';

import { SITES_AND_DEVICES_STYLE } from './console/style.ts';

/* The console (views/console.ts, views/console/org.ts): only classes the other pages do not use. */
const CONSOLE_STYLE = `
:root{--danger:#b91c1c;--danger-hover:#991b1b;--on-danger:#fff;--danger-bg:#fef2f2;--ok:#047857;--ok-bg:#ecfdf5;--warn:#92400e;--warn-bg:#fef3c7;--accent-bg:#eff6ff;--chip:#f3f4f6}
@media (prefers-color-scheme:dark){:root{--danger:#f87171;--danger-hover:#fca5a5;--on-danger:#1f0a0a;--danger-bg:#3a1c1c;--ok:#6ee7b7;--ok-bg:#0f2e24;--warn:#fcd34d;--warn-bg:#3a2a0c;--accent-bg:#172238;--chip:#262a31}}
.visually-hidden{position:absolute!important;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
.has-aside{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.25rem 1rem}
.account{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem;font-size:.875rem;font-weight:400;letter-spacing:0;color:var(--muted)}
.account strong{color:var(--text);font-weight:600}
.wide .site-header,.wide .site-footer{max-width:66rem}
.wide main{width:calc(100% - 2rem);max-width:64rem;padding:0;background:none;border:0;border-radius:0;box-shadow:none}
.wide h1{font-size:1.875rem}
.page-head{margin:0 0 1.5rem}
.page-head .lead{margin:0;max-width:44rem}
.card{margin:0 0 1.5rem;padding:1.5rem;background:var(--card);border:1px solid var(--line);border-radius:12px;box-shadow:0 1px 2px rgb(0 0 0/.06),0 8px 24px rgb(0 0 0/.04);scroll-margin-top:1rem}
.section-head{margin:0 0 1.25rem}
.section-head h2{display:flex;flex-wrap:wrap;align-items:baseline;gap:.25rem .5rem;margin:0 0 .25rem;font-size:1.25rem;line-height:1.3;letter-spacing:-.01em}
.section-head p{margin:0}
.count{color:var(--accent);font-size:1rem;font-weight:600}
h3{margin:0;font-size:1rem;line-height:1.35;overflow-wrap:break-word}
.notice{scroll-margin-top:6rem;margin:0 0 1.25rem;padding:.75rem 1rem;color:var(--text);background:var(--ok-bg);border:1px solid var(--ok);border-inline-start-width:4px;border-radius:8px;font-weight:600}
.toc{margin:0 0 1.5rem}
.toc ul{display:flex;flex-wrap:wrap;gap:.5rem;margin:0;padding:0;list-style:none}
.toc a{display:inline-flex;align-items:center;gap:.5rem;min-height:2.5rem;padding:.375rem 1rem;color:var(--text);background:var(--card);border:1px solid var(--line);border-radius:999px;font-size:.9375rem;font-weight:600;text-decoration:none}
.toc a:hover{color:var(--accent);border-color:var(--accent)}
.pill{display:inline-block;min-width:1.5rem;padding:0 .45rem;color:var(--on-accent);background:var(--accent);border-radius:999px;font-size:.75rem;font-weight:700;line-height:1.5rem;text-align:center}
.section-head .pill{align-self:center}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(19rem,100%),1fr));gap:1rem;margin:0;padding:0;list-style:none}
.tile{display:flex;flex-direction:column;gap:.875rem;min-width:0;padding:1.25rem;background:var(--card);border:1px solid var(--line);border-radius:10px}
.tile.is-blocked{background:var(--bg)}
.item-head{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem .75rem}
.item-name{flex:1 1 10rem;min-width:0}
.item-name a{text-decoration:none}
.item-name a:hover{text-decoration:underline}
.host{margin:0;color:var(--muted);font-size:.8125rem;overflow-wrap:break-word}
.logo{flex:none;object-fit:cover;background:var(--bg);border:1px solid var(--line);border-radius:10px}
.logo-sm{width:1.75rem;height:1.75rem;border-radius:6px}
.logo-md{width:2.75rem;height:2.75rem}
.logo-lg{width:3.5rem;height:3.5rem;border-radius:12px}
.avatar{display:inline-flex;align-items:center;justify-content:center;color:#fff;border:0;font-size:1.125rem;font-weight:700;line-height:1}
.logo-sm.avatar{font-size:.8125rem}
.logo-lg.avatar{font-size:1.5rem}
.av-0{background:#1d4ed8}.av-1{background:#047857}.av-2{background:#6d28d9}.av-3{background:#b45309}.av-4{background:#be185d}.av-5{background:#0e7490}
.badge{display:inline-flex;align-items:center;gap:.375rem;padding:.125rem .625rem;border:1px solid transparent;border-radius:999px;font-size:.75rem;font-weight:700;line-height:1.25rem;white-space:nowrap}
.badge-ok{color:var(--ok);background:var(--ok-bg)}
.badge-ok::before{content:"";width:.5rem;height:.5rem;background:currentColor;border-radius:50%}
.badge-danger{color:var(--danger);background:var(--danger-bg)}
.badge-neutral,.badge-muted{color:var(--muted);background:var(--chip)}
.badge-accent{color:var(--accent);background:var(--accent-bg)}
.badge-unread{color:var(--on-accent);background:var(--accent)}
.facts{display:grid;gap:.25rem;margin:0;font-size:.875rem}
.facts div{display:flex;flex-wrap:wrap;justify-content:space-between;gap:0 .75rem}
.facts dt{color:var(--muted)}
.facts dd{margin:0}
.label{color:var(--muted);font-size:.75rem;font-weight:600}
.label{margin:0 0 -.375rem}
.chips{display:flex;flex-wrap:wrap;gap:.375rem;margin:0;padding:0;list-style:none}
.chip{padding:.125rem .625rem;background:var(--chip);border-radius:6px;font-size:.8125rem}
.chip code{padding:0;background:none}
.is-blocked .chip{background:var(--card)}
.chip-warn{color:var(--warn);background:var(--warn-bg);font-weight:600}
.item-foot{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem;margin-top:auto;padding-top:.875rem;border-top:1px solid var(--line)}
.blocked-on{margin:0;color:var(--muted);font-size:.875rem}
.btn{display:inline-flex;align-items:center;justify-content:center;gap:.375rem;width:auto;min-height:2.25rem;padding:.375rem .875rem;font:inherit;font-size:.875rem;font-weight:600;line-height:1.25;text-align:center;text-decoration:none;border:1px solid transparent;border-radius:8px;cursor:pointer}
.button{display:flex;align-items:center;justify-content:center;min-height:2.75rem;padding:.625rem 1rem;font-weight:600;text-align:center;text-decoration:none;border:1px solid transparent;border-radius:8px}
.actions>.button{flex:1}
.btn.secondary,.button.secondary{border-color:var(--field)}
.danger{color:var(--on-danger);background:var(--danger)}
.danger:hover{background:var(--danger-hover)}
.danger-outline{color:var(--danger);background:transparent;border-color:currentColor}
.danger-outline:hover,.danger-quiet:hover{background:var(--danger-bg)}
.danger-quiet{color:var(--danger);background:transparent}
.senders{display:grid;gap:1rem;margin:0;padding:0;list-style:none}
.sender{padding:1.25rem;border:1px solid var(--line);border-radius:10px}
.sender form{display:flex;flex-direction:column;gap:1rem}
.check,.radio{display:flex;align-items:flex-start;gap:.625rem}
.check input,.radio input{flex:none;width:1.125rem;height:1.125rem;margin:.1875rem 0 0;accent-color:var(--accent)}
.check label,.radio label{margin:0}
.radio label{font-weight:400}
.check-hint{margin:-.75rem 0 0;padding-inline-start:1.75rem}
.categories{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(14rem,100%),1fr));gap:.75rem}
fieldset{min-width:0;margin:0;padding:.5rem 1rem .75rem;border:1px solid var(--line);border-radius:8px}
legend{padding:0 .375rem;margin-inline-start:-.375rem;font-size:.875rem;font-weight:700}
.radio{padding:.25rem 0}
.form-foot{display:flex;justify-content:flex-end}
.form-foot .btn,.inline-form .btn{min-height:2.75rem;padding-inline:1.25rem}
.messages{margin:0;padding:0;list-style:none}
.message{padding:1.25rem 0;border-top:1px solid var(--line)}
.message:first-child{padding-top:0;border-top:0}
.message.is-unread{position:relative}
.message.is-unread::before{content:"";position:absolute;inset-block:1.25rem;inset-inline-start:-1.5rem;width:4px;background:var(--accent);border-radius:0 4px 4px 0}
[dir=rtl] .message.is-unread::before{border-radius:4px 0 0 4px}
.message.is-unread:first-child::before{inset-block-start:0}
.message-meta{display:flex;flex-wrap:wrap;align-items:center;gap:.375rem .625rem;color:var(--muted);font-size:.875rem}
.site-name{color:var(--text);font-weight:700;overflow-wrap:break-word;min-width:0}
.message-title{margin:.625rem 0 .375rem;font-size:1.0625rem;white-space:pre-wrap}
.is-unread .message-title{font-weight:800}
.message-body{margin:0 0 1rem;white-space:pre-wrap;overflow-wrap:anywhere}
.message-actions{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem}
.pager{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.75rem;margin-top:1.25rem;padding-top:1.25rem;border-top:1px solid var(--line)}
.pager .older{margin-inline-start:auto}
.empty{margin:0;padding:1.5rem;color:var(--muted);background:var(--bg);border-radius:8px;text-align:center}
.inline-form{display:flex;flex-wrap:wrap;align-items:flex-end;gap:.75rem}
.select-field{flex:0 1 16rem;min-width:12rem}
select{display:block;width:100%;min-height:2.75rem;padding:.5rem .75rem;font:inherit;color:inherit;background:var(--card);border:1px solid var(--field);border-radius:8px}
.links{display:grid;gap:.5rem;margin:0;padding:0;list-style:none}
.links a,.links .plain{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;padding:.75rem 1rem;border:1px solid var(--line);border-radius:8px;font-weight:600;text-decoration:none;overflow-wrap:break-word}
.links a:hover{border-color:var(--accent);background:var(--accent-bg)}
.links a::after{content:"›" / "";font-size:1.25rem;line-height:1}
[dir=rtl] .links a::after{content:"‹" / ""}
.footnote{margin:0 0 1rem;text-align:center}
.crumbs ol{display:flex;flex-wrap:wrap;gap:.375rem;margin:0 0 1rem;padding:0;color:var(--muted);font-size:.875rem;list-style:none}
.crumbs li+li::before{content:"/" / "";margin-inline-end:.375rem;color:var(--field)}
.crumbs [aria-current]{color:var(--text);font-weight:600}
.table-wrap{overflow-x:auto}
.table{width:100%;border-collapse:collapse;font-size:.9375rem}
.table th,.table td{padding:.75rem;text-align:start;vertical-align:middle;border-bottom:1px solid var(--line)}
.table thead th{color:var(--muted);font-size:.75rem;font-weight:700;letter-spacing:.02em}
.table tbody th{font-weight:600;overflow-wrap:break-word}
.table tbody tr:last-child>*{border-bottom:0}
.table .muted{margin-inline-start:.25rem}
.cell-action{text-align:end}
.table .cell-action{text-align:end}
.is-removed th{color:var(--muted)}
.confirm-head{display:flex;align-items:center;gap:1rem;margin:0 0 1rem}
.confirm-head h1{margin:0}
.consequences{display:grid;gap:.5rem;margin:0 0 1rem;padding:0;list-style:none}
.consequences li{position:relative;padding-inline-start:1.5rem}
.notice-error{background:var(--danger-bg);border-color:var(--danger)}
.add-form{margin-top:1rem}
.consequences li::before{content:"";position:absolute;inset-inline-start:.25rem;top:.55em;width:.5rem;height:.5rem;background:var(--danger);border-radius:50%}
@media (max-width:40rem){.table thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}.table,.table tbody,.table tr,.table th,.table td{display:block}.table tr{padding:.5rem 0;border-bottom:1px solid var(--line)}.table tbody tr:last-child{border-bottom:0}.table th,.table td{padding:.25rem 0;border:0}.table .cell-action{text-align:start}.card{padding:1.25rem 1rem}.wide h1{font-size:1.5rem}.tile,.sender{padding:1rem}.message.is-unread::before{inset-inline-start:-1rem}.form-foot .btn,.inline-form .btn{width:100%}.inline-form{align-items:stretch}.select-field{flex:1 1 100%}}
@media (forced-colors:active){.badge,.chip,.pill,.avatar{border:1px solid CanvasText}.message.is-unread::before{background:Highlight}}
`.trim();

export const PAGE_STYLE = `
:root{color-scheme:light dark;--bg:#f3f4f6;--card:#fff;--text:#111827;--muted:#4b5563;--line:#e5e7eb;--field:#6b7280;--accent:#1d4ed8;--accent-hover:#1e3a8a;--on-accent:#fff;--error:#b91c1c;--error-bg:#fef2f2;--focus:#1d4ed8;--code-bg:#f3f4f6}
@media (prefers-color-scheme:dark){:root{--bg:#0f1115;--card:#1a1d23;--text:#f3f4f6;--muted:#c0c6d0;--line:#2e333b;--field:#8b93a1;--accent:#93b4fd;--accent-hover:#bfd2fe;--on-accent:#0b1733;--error:#fca5a5;--error-bg:#3a1c1c;--focus:#93b4fd;--code-bg:#262a31}}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;display:flex;flex-direction:column;align-items:center;background:var(--bg);color:var(--text);font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue","Noto Sans",Arial,sans-serif}
.skip{position:absolute;left:1rem;top:-10rem;padding:.5rem 1rem;background:var(--card);color:var(--accent);border-radius:8px;z-index:1}
.skip:focus{top:1rem}
.site-header,.site-footer{width:100%;max-width:28rem;padding:2rem 1rem 1rem}
.site-header{font-weight:700;font-size:1.125rem;letter-spacing:-.01em}
.site-footer{padding-top:1.5rem;color:var(--muted);font-size:.875rem;text-align:center}
main{width:calc(100% - 2rem);max-width:28rem;padding:2rem;background:var(--card);border:1px solid var(--line);border-radius:12px;box-shadow:0 1px 2px rgb(0 0 0/.06),0 8px 24px rgb(0 0 0/.06)}
main:focus{outline:none}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 .5rem;letter-spacing:-.015em;overflow-wrap:break-word}
h2{font-size:1rem;margin:1.5rem 0 .5rem}
p{margin:0 0 1rem}
strong{overflow-wrap:break-word}
.lead,.muted{color:var(--muted)}
.muted{font-size:.875rem}
form{margin:0}
.field{margin:1.5rem 0 1.25rem}
label{display:block;font-weight:600;margin-bottom:.375rem}
.hint{color:var(--muted);font-size:.875rem;margin:-.125rem 0 .5rem}
input[type=email],input[type=text]{display:block;width:100%;min-height:2.75rem;padding:.5rem .75rem;font:inherit;color:inherit;background:var(--card);border:1px solid var(--field);border-radius:8px}
input.otp{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:1.5rem;letter-spacing:.4em;text-align:center}
input[aria-invalid=true]{border:2px solid var(--error)}
.error{margin:0 0 .5rem;padding:.5rem .75rem;color:var(--error);background:var(--error-bg);border-inline-start:4px solid var(--error);border-radius:4px;font-weight:600}
button{display:block;width:100%;min-height:2.75rem;padding:.625rem 1rem;font:inherit;font-weight:600;border-radius:8px;border:1px solid transparent;cursor:pointer}
.primary{background:var(--accent);color:var(--on-accent)}
.primary:hover{background:var(--accent-hover)}
.secondary{background:transparent;color:var(--text);border-color:var(--field)}
.secondary:hover{background:var(--bg)}
.link{display:inline;width:auto;min-height:0;padding:.25rem 0;background:none;border:0;color:var(--accent);font-weight:500;text-decoration:underline;text-underline-offset:2px}
.alt{margin-top:1rem;text-align:center}
a{color:var(--accent);text-underline-offset:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.list{margin:0 0 1rem;padding-inline-start:1.25rem}
.list li{margin:.25rem 0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.875em;background:var(--code-bg);padding:.1em .35em;border-radius:4px;overflow-wrap:anywhere}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
.actions form{flex:1;min-width:0}
.actions>*{min-width:0}
button,.button{overflow-wrap:break-word}
[hidden]{display:none!important}
.or{display:flex;align-items:center;gap:.75rem;margin:1.5rem 0 1rem;color:var(--muted);font-size:.875rem}
.or::before,.or::after{content:"";flex:1;border-top:1px solid var(--line)}
.ways{display:grid;gap:.75rem}
@media (max-width:30rem){.site-header{padding-top:1.25rem}main{width:100%;padding:1.5rem 1rem;border-radius:0;border-inline:0;box-shadow:none}.actions{flex-direction:column}}
@media (forced-colors:active){button{border:1px solid ButtonText}.error{border:1px solid CanvasText}}
${CONSOLE_STYLE}
${SITES_AND_DEVICES_STYLE}`.trim();

export const PAGE_STYLE_HASH = createHash('sha256').update(PAGE_STYLE, 'utf8').digest('base64');
