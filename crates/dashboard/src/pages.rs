//! The dashboard's HTML: the grid page (its script fetches `/api/grid` and redraws in place
//! every few seconds, no reload), a cell's or a host's history (an SVG plot from the report
//! crate, with the regression verdict drawn as the history's mean and its interval) and the
//! table of failed results. Inline CSS and script only: nothing is fetched from elsewhere.

use std::fmt::Write as _;

use report::plot::line::{AxisSpec, LineChart, Point, RefLine, Series};
use report::plot::svg::esc;
use results::regression::Judgement;
use store::PathResult;

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}table.grid{border-collapse:collapse;margin:.5em 0 1.5em}\
.grid td,.grid th{border:1px solid #ccc;padding:.3em .6em;text-align:right;min-width:4em}.grid th{background:#f4f4f4}\
td.ok{background:#c8e6c9}td.warn{background:#fff3b0}td.bad{background:#ffcdd2}td.regressed{background:#e57373;font-weight:bold}\
td.failed{background:#bdbdbd;color:#b00020;text-align:center}td.missing{background:repeating-linear-gradient(45deg,#eee,#eee 4px,#fff 4px,#fff 8px);text-align:center}\
td.new{background:#e3f2fd}td.none{background:#fafafa}a{color:#0645ad}.legend span{padding:.1em .5em;margin-right:.4em;border:1px solid #ccc}\
svg.plot{max-width:100%;height:auto}";

/// The grid page; `poll_ms` between refreshes.
pub fn index(poll_ms: u64) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>tcplab dashboard</title><style>{STYLE}</style></head><body>\
<h1>tcplab dashboard</h1><p class=\"legend\">cell colour: newest value as a share of the path's baseline (its mean in the period): \
<span class=\"ok\" style=\"background:#c8e6c9\">within threshold</span><span style=\"background:#fff3b0\">below</span>\
<span style=\"background:#ffcdd2\">far below</span><span style=\"background:#e57373\">regressed</span>\
<span style=\"background:#bdbdbd\">failed ✗</span><span>missing -</span><span style=\"background:#e3f2fd\">no history</span> — hover a cell for its reason</p>\
<p id=\"updated\">loading…</p><div id=\"grids\"></div><h2>rounds seen</h2><ol id=\"rounds\"></ol>\
<script>{}</script></body></html>",
        script(poll_ms)
    )
}

fn script(poll_ms: u64) -> String {
    r#"(function(){var q=new URLSearchParams(location.search),tok=q.get('token'),poll=+(q.get('poll')||POLL);
function u(p,a){var s=new URLSearchParams(a||{});if(tok)s.set('token',tok);var t=s.toString();return p+(t?'?'+t:'');}
function el(t,a,x){var e=document.createElement(t);for(var k in a||{})e.setAttribute(k,a[k]);if(x!=null)e.textContent=x;return e;}
var seen={};
function draw(gs){var root=document.getElementById('grids');root.textContent='';
gs.forEach(function(g){var h=el('h2',{},g.inventory+' — ');var a=el('a',{href:u('/run/'+g.run),'class':'run'},'run '+g.run);h.appendChild(a);
h.appendChild(document.createTextNode(' '+g.started+' ('+g.status+', '+g.test+')'));root.appendChild(h);
if(!seen[g.inventory+'#'+g.run]){seen[g.inventory+'#'+g.run]=1;document.getElementById('rounds').appendChild(el('li',{'data-run':g.run},g.inventory+': run '+g.run));}
var t=el('table',{'class':'grid','data-run':g.run}),hr=el('tr');hr.appendChild(el('th',{},'sender ↓ receiver →'));
g.receivers.forEach(function(r){var th=el('th');th.appendChild(el('a',{href:u('/host',{name:r})},r));hr.appendChild(th);});t.appendChild(hr);
g.cells.forEach(function(row,i){var tr=el('tr'),th=el('th');th.appendChild(el('a',{href:u('/host',{name:g.senders[i]})},g.senders[i]));tr.appendChild(th);
row.forEach(function(c,j){var td=el('td',{'class':c['class'],title:c.title,'data-sender':g.senders[i],'data-receiver':g.receivers[j]});
if(c['class']=='none'){tr.appendChild(td);return;}td.appendChild(el('a',{href:u('/cell',{sender:g.senders[i],receiver:g.receivers[j],test:g.test})},c.text));tr.appendChild(td);});t.appendChild(tr);});
root.appendChild(t);});}
function tick(){fetch(u('/api/grid')).then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);return r.json();}).then(function(gs){draw(gs);
document.getElementById('updated').textContent='updated '+new Date().toISOString();}).catch(function(e){document.getElementById('updated').textContent='cannot reach the dashboard: '+e;})
.then(function(){setTimeout(tick,poll);});}
tick();})();"#
        .replace("POLL", &poll_ms.to_string())
}

/// The history page of `title`: one plot of every series in `results` (one per receiver when
/// `by_receiver`), the verdict of each, and the failures.
pub fn history(
    title: &str,
    results: &[PathResult],
    judged: &[Judgement],
    now_unix_ms: u64,
    token: &str,
) -> String {
    let mut chart =
        LineChart::new(title, AxisSpec::linear("hours before now"), AxisSpec::linear("goodput or rate"));
    chart.x.zero = false;
    let mut names: Vec<String> = results.iter().map(|r| r.receiver.clone()).collect();
    names.dedup();
    names.sort();
    names.dedup();
    let scale = if results.iter().any(|r| r.metric.as_deref() == Some("goodput_bps")) { 1e6 } else { 1.0 };
    for name in &names {
        let points: Vec<Point> = results
            .iter()
            .filter(|r| &r.receiver == name)
            .filter_map(|r| {
                Some(Point::new(
                    -((now_unix_ms.saturating_sub(r.started_unix_ms)) as f64 / 3.6e6),
                    r.value? / scale,
                ))
            })
            .collect();
        chart.series.push(Series { name: name.clone(), points });
    }
    chart.y.label = if scale > 1.0 { "goodput (Mbit/s)".into() } else { "rate (/s)".into() };
    for j in judged.iter().filter(|j| j.history_mean > 0.0) {
        chart
            .refs
            .push(RefLine { y: j.history_mean / scale, label: format!("{} baseline", j.series.receiver) });
        if let Some(ci) = j.interval_pct {
            let low = j.history_mean * (1.0 - ci / 100.0) / scale;
            chart.refs.push(RefLine { y: low, label: format!("{} regression bound", j.series.receiver) });
        }
    }
    let measured = results.iter().filter(|r| r.value.is_some()).count();
    let mut body = format!(
        "<p><a href=\"/{}\">← grid</a></p><div id=\"plot\" data-points=\"{measured}\">{}</div><h2>verdicts</h2><ul id=\"verdicts\">",
        if token.is_empty() { String::new() } else { format!("?token={}", esc(token)) },
        chart.render()
    );
    for j in judged {
        let ci = j.interval_pct.map_or(String::new(), |c| format!(" ± {c:.1} %"));
        let _ = write!(
            body,
            "<li class=\"{:?}\">{} → {} ({}): {:?}, newest {:+.1} %{ci} against {} earlier results</li>",
            j.verdict,
            esc(&j.series.sender),
            esc(&j.series.receiver),
            esc(&j.series.label),
            j.verdict,
            j.change_pct,
            j.history.len()
        );
    }
    body.push_str("</ul><h2>failed results</h2><ul id=\"failures\">");
    for r in results.iter().filter(|r| r.status != "completed") {
        let why = r.error.as_deref().unwrap_or(&r.status);
        let _ = write!(
            body,
            "<li>{} → {} at {}: {}</li>",
            esc(&r.sender),
            esc(&r.receiver),
            report::tables::utc(r.started_unix_ms),
            esc(why)
        );
    }
    body.push_str("</ul>");
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>{body}</body></html>",
        esc(title),
        esc(title)
    )
}
