/** Styles of the console's site, devices and Remove access pages (issue 16): only classes no other page uses. */
export const SITES_AND_DEVICES_STYLE = `
.more{margin:0;font-size:.875rem}
.section-foot{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.75rem;margin-top:1.25rem;padding-top:1.25rem;border-top:1px solid var(--line)}
.section-foot p{margin:0}
.subhead{margin:1.25rem 0 .5rem;font-size:.875rem;color:var(--muted)}
.unlinked{overflow-wrap:anywhere}
.tile.is-current{border-color:var(--accent)}
.card>h2{margin:0 0 1rem;font-size:1.25rem}
@media (max-width:40rem){.section-foot .btn{width:100%}}
`.trim();
