/** The dashboard's stylesheet: system fonts, one colour per processState, nothing fetched from elsewhere. */
export const DASHBOARD_CSS = `
:root {
  --bg: #f4f6f9; --panel: #fff; --ink: #1c2430; --muted: #5d6b7e; --line: #dde3ea; --accent: #2457c5;
  --Pending: #64748b; --Processing: #2563eb; --Processed: #15803d; --CompensationPending: #b45309;
  --Compensating: #d97706; --Compensated: #7c3aed; --CompensationFailed: #b91c1c; --Error: #dc2626;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
header.top {
  display: flex; align-items: center; justify-content: space-between; gap: 16px;
  padding: 14px 24px; background: #17202c; color: #fff;
}
header.top h1 { margin: 0; font-size: 19px; font-weight: 650; }
header.top .sub { margin: 2px 0 0; color: #aeb9c8; font-size: 13px; }
header.top .sub a { color: inherit; }
.connection { margin: 0; font-size: 13px; color: #cbd5e1; white-space: nowrap; }
header.top .who { text-align: right; }
header.top .who strong { color: #e2e8f0; font-weight: 600; }
.connection::before { content: ""; display: inline-block; width: 8px; height: 8px; margin-right: 7px; border-radius: 50%; background: #22c55e; }
.connection.down::before { background: #ef4444; }
.connection.waiting::before { background: #94a3b8; }
main { padding: 18px 24px 32px; display: grid; gap: 18px; max-width: 1680px; margin: 0 auto; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; min-width: 0; }
.panel h2 { margin: 0; font-size: 15px; font-weight: 650; }
.panel h3 { margin: 0 0 8px; font-size: 13px; font-weight: 650; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
.panel-head { display: flex; flex-wrap: wrap; align-items: center; gap: 10px 14px; margin-bottom: 12px; }
.panel-head .spacer { flex: 1; }
.alert { margin: 0; padding: 10px 14px; border-radius: 8px; background: #fef2f2; color: #991b1b; border: 1px solid #fecaca; }
.cards { display: grid; grid-template-columns: repeat(8, minmax(0, 1fr)); gap: 10px; margin-top: 12px; }
.card {
  display: flex; flex-direction: column; align-items: flex-start; gap: 2px; padding: 10px 12px;
  border: 1px solid var(--line); border-left: 4px solid var(--c, var(--line)); border-radius: 8px;
  background: #fff; color: inherit; font: inherit; text-align: left; cursor: pointer;
}
.card:hover { background: #f8fafc; }
.card[aria-pressed="true"] { background: #eef3ff; border-color: var(--accent); border-left-color: var(--c); }
.card .count { font-size: 24px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card .label { font-size: 12px; color: var(--muted); }
.gauges { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 14px 0 0; color: var(--muted); }
.gauges div { display: flex; gap: 6px; align-items: baseline; }
.gauges dt { font-size: 13px; }
.gauges dd { margin: 0; color: var(--ink); font-weight: 600; font-variant-numeric: tabular-nums; }
.breaker[data-state="open"] { color: var(--Error); }
.breaker[data-state="halfOpen"] { color: var(--Compensating); }
.table-wrap { overflow: auto; max-height: 560px; border: 1px solid var(--line); border-radius: 8px; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 7px 10px; text-align: left; border-bottom: 1px solid var(--line); vertical-align: top; }
th { position: sticky; top: 0; background: #f8fafc; font-size: 12px; font-weight: 600; color: var(--muted); white-space: nowrap; z-index: 1; }
tbody tr:last-child td { border-bottom: 0; }
tbody tr:hover { background: #f8fafc; }
tr.selected, tr.selected:hover { background: #eef3ff; }
td.num { text-align: right; }
td.nowrap, td.mono { white-space: nowrap; }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
td.error { max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; color: #9f1239; }
td.empty { text-align: center; color: var(--muted); padding: 24px; }
.muted { color: var(--muted); }
.due { color: var(--Processing); }
.overdue { color: var(--Error); font-weight: 600; }
.badge {
  display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; font-weight: 600; white-space: nowrap;
  color: var(--c); background: color-mix(in srgb, var(--c) 12%, white); border: 1px solid color-mix(in srgb, var(--c) 35%, white);
}
.state-Pending { --c: var(--Pending); } .state-Processing { --c: var(--Processing); }
.state-Processed { --c: var(--Processed); } .state-CompensationPending { --c: var(--CompensationPending); }
.state-Compensating { --c: var(--Compensating); } .state-Compensated { --c: var(--Compensated); }
.state-CompensationFailed { --c: var(--CompensationFailed); } .state-Error { --c: var(--Error); }
button, select, input { font: inherit; }
button {
  padding: 6px 12px; border-radius: 7px; border: 1px solid #c5cfdb; background: #fff; color: var(--ink); cursor: pointer;
}
button:hover:not(:disabled) { background: #f1f5f9; }
button:disabled { opacity: .45; cursor: not-allowed; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.primary:hover:not(:disabled) { background: #1d4aa8; }
button.danger { color: #b91c1c; border-color: #f1b4b4; }
button.link { padding: 0; border: 0; background: none; color: var(--accent); text-decoration: underline; text-underline-offset: 2px; }
button.link:hover:not(:disabled) { background: none; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
label { display: inline-flex; align-items: center; gap: 6px; color: var(--muted); }
select, input[type="number"], input[type="text"], input[type="datetime-local"] {
  padding: 5px 8px; border: 1px solid #c5cfdb; border-radius: 7px; background: #fff; color: var(--ink); min-width: 0;
}
.note { margin: 10px 0 0; color: var(--muted); font-size: 13px; }
.result { margin: 8px 0 0; min-height: 1.45em; font-size: 13px; }
.result.ok { color: var(--Processed); }
.result.refused { color: #b91c1c; }
.playground .panel-head { align-items: baseline; }
.playground p.intro { margin: 0; color: var(--muted); font-size: 13px; }
.playground-grid { display: grid; grid-template-columns: minmax(0, 0.8fr) minmax(0, 1.3fr) minmax(0, 1fr); gap: 24px; }
.playground-grid > * { min-width: 0; }
.playground-grid > * + * { border-left: 1px solid var(--line); padding-left: 24px; }
.playground form { margin: 0; }
.playground fieldset { border: 0; padding: 0; margin: 0; display: grid; gap: 10px; min-width: 0; }
.playground legend { padding: 0; margin-bottom: 8px; font-weight: 650; }
.fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: 8px 12px; }
.field { display: grid; gap: 3px; }
.field label { font-size: 12.5px; }
.field input, .field select { width: 100%; }
.check { color: var(--ink); align-items: flex-start; }
.check input { margin-top: 3px; }
.buttons { display: flex; flex-wrap: wrap; gap: 8px; }
.hint { margin: 0; color: var(--muted); font-size: 12.5px; }
.faults table { font-size: 12.5px; }
.faults th, .faults td { padding: 5px 8px; }
.bulk .panel-head { align-items: baseline; }
.bulk p.intro { margin: 0; color: var(--muted); font-size: 13px; }
.bulk form { display: grid; gap: 10px; margin: 0; max-width: 1080px; }
.bulk .fields { grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); }
.bulk .field.wide { grid-column: span 2; }
.bulk progress { width: 100%; max-width: 1080px; height: 8px; margin-top: 10px; accent-color: var(--accent); }
.sample-ids { display: flex; flex-wrap: wrap; gap: 4px 10px; margin: 6px 0 0; padding: 0; list-style: none; font-size: 12.5px; }
.tuning .panel-head { align-items: baseline; }
.tuning p.intro { margin: 0 0 12px; color: var(--muted); font-size: 13px; max-width: 1080px; }
.whatif-badge {
  padding: 2px 10px; border-radius: 999px; font-size: 12px; font-weight: 650; letter-spacing: .02em;
  color: #92400e; background: #fef3c7; border: 1px dashed #d97706;
}
.tuning-grid { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.3fr); gap: 24px; align-items: start; }
.tuning table { font-size: 13px; }
.tuning tbody th { position: static; background: none; white-space: normal; font-size: 13px; color: var(--ink); font-weight: 600; }
.tuning .setting { display: block; color: var(--muted); font-weight: 400; font-size: 11.5px; }
.tuning .formula { display: block; color: var(--muted); font-weight: 400; font-size: 11.5px; }
.tuning td.whatif, .tuning td.num { white-space: nowrap; }
.tuning input[type="range"] { width: 170px; vertical-align: middle; accent-color: #d97706; }
.tuning output { display: inline-block; min-width: 88px; margin-left: 8px; font-variant-numeric: tabular-nums; }
.tuning output.changed, .tuning tr.changed td.whatif { color: #b45309; font-weight: 650; }
.tuning td.whatif .setting { margin-top: 2px; }
.tuning td.change { white-space: nowrap; color: var(--muted); }
.tuning td.change.more { color: #b45309; }
.tuning td.change.less { color: var(--Processed); }
.tuning th.num { text-align: right; }
.tuning-sub { margin-top: 18px !important; }
#tuning-retries { max-width: 760px; }
#tuning-retries tr.final td { color: var(--Error); }
.tuning code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; color: var(--ink); background: #fef3c7; padding: 0 4px; border-radius: 4px; }
.detail-grid { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 16px; }
.detail-grid > section { min-width: 0; }
.detail-grid .span2 { grid-column: span 2; }
.detail-grid .span3 { grid-column: 1 / -1; }
.scroll.tall { max-height: 70vh; }
table.trace td.span-name { white-space: nowrap; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
table.trace td.service { color: var(--muted); }
table.trace td.waterfall { width: 45%; min-width: 240px; }
table.trace .track { position: relative; display: block; height: 12px; background: #f1f5f9; border-radius: 3px; }
table.trace .bar { position: absolute; top: 1px; height: 10px; border-radius: 3px; background: var(--Processing); min-width: 2px; }
table.trace .bar.kind-producer { background: #7c3aed; }
table.trace .bar.kind-consumer { background: var(--Processed); }
table.trace .bar.kind-client { background: var(--Compensating); }
table.trace .bar.error { background: var(--Error); }
table.trace tr.span-error td.span-name, .span-status.error { color: var(--Error); font-weight: 600; }
.detail-grid table { font-size: 12.5px; }
.detail-grid th, .detail-grid td { padding: 5px 8px; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 12px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
ol.steps { list-style: none; margin: 0; padding: 0; display: grid; gap: 10px; }
ol.steps > li { border-left: 3px solid var(--c, var(--line)); padding: 2px 0 2px 12px; }
.step-head { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; font-weight: 600; }
.step-head .agent { font-weight: 400; color: var(--muted); }
.step-head .no-undo { font-weight: 400; font-size: 12px; color: var(--muted); border: 1px dashed var(--line); border-radius: 999px; padding: 0 8px; }
ul.events { list-style: none; margin: 4px 0 0; padding: 0; font-size: 13px; }
ul.events li { display: grid; grid-template-columns: 70px 150px minmax(0, 1fr); gap: 8px; }
ul.events .what { font-weight: 600; }
.ev-succeeded .what, .ev-compensated .what { color: var(--Processed); }
.ev-failed .what, .ev-compensation-failed .what, .ev-error .what, .ev-compensation-error .what { color: var(--Error); }
.ev-compensation-dispatched .what { color: var(--Compensated); }
.scroll { max-height: 420px; overflow: auto; border: 1px solid var(--line); border-radius: 8px; }
@media (max-width: 1200px) {
  .cards { grid-template-columns: repeat(4, minmax(0, 1fr)); }
  .playground-grid, .detail-grid, .tuning-grid { grid-template-columns: minmax(0, 1fr); }
  .detail-grid .span2, .detail-grid .span3 { grid-column: auto; }
  .playground-grid > * + * { border-left: 0; padding-left: 0; border-top: 1px solid var(--line); padding-top: 16px; }
}
`;
