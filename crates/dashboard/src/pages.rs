//! The dashboard's HTML: the grid page (its script long-polls `/api/grid` with the token of
//! what it shows, and redraws in place, no reload, when the grid changed), a cell's or a host's history (an SVG plot from the report
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
    r#"(function(){var q=new URLSearchParams(location.search),tok=q.get('token'),poll=+(q.get('poll')||POLL),wait=+(q.get('wait')||20000),known='';
function u(p,a){var s=new URLSearchParams(a||{});if(tok)s.set('token',tok);var t=s.toString();return p+(t?'?'+t:'');}
function el(t,a,x){var e=document.createElement(t);for(var k in a||{})e.setAttribute(k,a[k]);if(x!=null)e.textContent=x;return e;}
function h(s){return String(s).replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/>/g,'&gt;').replace(/"/g,'&quot;');}
function tag(t,a){var o='<'+t;for(var k in a)o+=' '+k+'="'+h(a[k])+'"';return o+'>';}
function link(href,x){return tag('a',{href:href})+h(x)+'</a>';}
var seen={};
function table(g){var o=[tag('table',{'class':'grid','data-run':g.run})+'<tr><th>sender ↓ receiver →</th>'];
g.receivers.forEach(function(r){o.push('<th>'+link(u('/host',{name:r}),r)+'</th>');});o.push('</tr>');
g.cells.forEach(function(row,i){var s=g.senders[i];o.push('<tr><th>'+link(u('/host',{name:s}),s)+'</th>');
row.forEach(function(c,j){var r=g.receivers[j];o.push(tag('td',{'class':c['class'],title:c.title,'data-sender':s,'data-receiver':r}));
if(c['class']!='none')o.push(link(u('/cell',{sender:s,receiver:r,test:g.test}),c.text));o.push('</td>');});o.push('</tr>');});
o.push('</table>');return o.join('');}
function draw(gs){var root=document.getElementById('grids'),o=[];
gs.forEach(function(g){o.push('<h2>'+h(g.inventory)+' — '+tag('a',{href:u('/run/'+g.run),'class':'run'})+'run '+h(g.run)+'</a> '+h(g.started+' ('+g.status+', '+g.test+')')+'</h2>'+table(g));
if(!seen[g.inventory+'#'+g.run]){seen[g.inventory+'#'+g.run]=1;document.getElementById('rounds').appendChild(el('li',{'data-run':g.run},g.inventory+': run '+g.run));}});
root.innerHTML=o.join('');}
function stamp(t){document.getElementById('updated').textContent=t;}
function tick(){fetch(u('/api/grid',known?{known:known,wait:wait}:{})).then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);
if(r.status==204)return null;known=r.headers.get('x-grid-token')||'';return r.json();}).then(function(gs){if(gs)draw(gs);
stamp('updated '+new Date().toISOString());}).catch(function(e){stamp('cannot reach the dashboard: '+e);})
.then(function(){setTimeout(tick,poll);});}
tick();})();"#
        .replace("POLL", &poll_ms.to_string())
}

/// The items of the verdict list (one per series), then the failures list opened and filled
/// (each failed result with its reason); the caller opens the first and closes the second.
fn list_verdicts_and_failures(body: &mut String, results: &[PathResult], judged: &[Judgement]) {
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
}

/// What one history plot draws of a result.
type Pick = fn(&PathResult) -> Option<f64>;

/// One history plot: its element id, title, y label, divisor, and its curves per receiver
/// (suffix, value).
struct Panel {
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    div: f64,
    parts: &'static [(&'static str, Pick)],
}

const PANELS: &[Panel] = &[
    Panel {
        id: "plot-retransmits",
        title: "retransmits",
        unit: "retransmitted segments",
        div: 1.0,
        parts: &[("", |r| r.detail.retransmits)],
    },
    Panel {
        id: "plot-rtt",
        title: "RTT",
        unit: "mean RTT (ms)",
        div: 1e3,
        parts: &[("", |r| r.detail.rtt_mean_us)],
    },
    Panel {
        id: "plot-latency",
        title: "request/response latency",
        unit: "latency (µs)",
        div: 1.0,
        parts: &[(" p50", |r| r.detail.p50_us), (" p99", |r| r.detail.p99_us)],
    },
];

/// Hours before `now` of a result (the plots' x axis).
fn hours_before(now_unix_ms: u64, r: &PathResult) -> f64 {
    -((now_unix_ms.saturating_sub(r.started_unix_ms)) as f64 / 3.6e6)
}

/// A curve with more points than this is drawn thinned: [`THIN_BUCKETS`] equal spans of
/// time, each as its mean, minimum and maximum (the page says so; the CSV has every result).
pub const THIN_ABOVE: usize = 1000;
/// How many spans a thinned curve has.
pub const THIN_BUCKETS: usize = 400;

/// `points` (x ascending) as they are, or thinned to per-span mean, minimum and maximum.
fn thin(name: String, points: Vec<Point>) -> Vec<Series> {
    if points.len() <= THIN_ABOVE {
        return vec![Series { name, points }];
    }
    let (lo, hi) = (points[0].x, points[points.len() - 1].x);
    let width = ((hi - lo) / THIN_BUCKETS as f64).max(f64::MIN_POSITIVE);
    let mut spans: Vec<(f64, f64, f64, f64, usize)> = Vec::new();
    for p in &points {
        let k = (((p.x - lo) / width) as usize).min(THIN_BUCKETS - 1);
        let x = lo + (k as f64 + 0.5) * width;
        match spans.last_mut().filter(|s| s.0 == x) {
            Some(s) => *s = (x, s.1 + p.y, s.2.min(p.y), s.3.max(p.y), s.4 + 1),
            None => spans.push((x, p.y, p.y, p.y, 1)),
        }
    }
    let curve = |suffix: &str, f: fn(&(f64, f64, f64, f64, usize)) -> f64| Series {
        name: format!("{name}{suffix}"),
        points: spans.iter().map(|s| Point::new(s.0, f(s))).collect(),
    };
    vec![curve(" mean", |s| s.1 / s.4 as f64), curve(" min", |s| s.2), curve(" max", |s| s.3)]
}

/// A chart of `parts` of `results`, one curve per receiver and part (thinned beyond
/// [`THIN_ABOVE`] points).
fn chart(
    title: &str,
    unit: &str,
    results: &[PathResult],
    parts: &[(&str, Pick)],
    div: f64,
    now: u64,
) -> LineChart {
    let mut chart = LineChart::new(title, AxisSpec::linear("hours before now"), AxisSpec::linear(unit));
    chart.x.zero = false;
    let mut names: Vec<&str> = results.iter().map(|r| r.receiver.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        for (suffix, pick) in parts {
            let points: Vec<Point> = results
                .iter()
                .filter(|r| r.receiver == name)
                .filter_map(|r| Some(Point::new(hours_before(now, r), pick(r)? / div)))
                .collect();
            chart.series.extend(thin(format!("{name}{suffix}"), points));
        }
    }
    chart
}

/// The verdicts in a few words, for the plots' titles.
fn verdict_note(judged: &[Judgement]) -> String {
    let regressed: Vec<String> = judged
        .iter()
        .filter(|j| j.verdict == results::regression::Verdict::Regressed)
        .map(|j| format!("{} → {} regressed {:+.1} %", j.series.sender, j.series.receiver, j.change_pct))
        .collect();
    match (regressed.len(), judged.len()) {
        (_, 0) => String::new(),
        (0, n) => format!(" (verdict: no regression in {n} series)"),
        _ => format!(" (verdict: {})", regressed.join(", ")),
    }
}

/// The headline plot: goodput or rate, with each series' baseline and regression bound, and
/// its newest result marked with the verdict when it regressed.
fn headline_chart(title: &str, results: &[PathResult], judged: &[Judgement], now: u64) -> LineChart {
    let goodput = results.iter().any(|r| r.metric.as_deref() == Some("goodput_bps"));
    let (scale, unit) = if goodput { (1e6, "goodput (Mbit/s)") } else { (1.0, "rate (/s)") };
    let mut chart = chart(title, unit, results, &[("", |r| r.value)], scale, now);
    for j in judged.iter().filter(|j| j.history_mean > 0.0) {
        let who = &j.series.receiver;
        chart.refs.push(RefLine { y: j.history_mean / scale, label: format!("{who} baseline") });
        if let Some(ci) = j.interval_pct {
            let low = j.history_mean * (1.0 - ci / 100.0) / scale;
            chart.refs.push(RefLine { y: low, label: format!("{who} regression bound") });
        }
        if j.verdict == results::regression::Verdict::Regressed {
            let x = -((now.saturating_sub(j.latest_unix_ms)) as f64 / 3.6e6);
            chart.series.push(Series {
                name: format!("{who} regressed {:+.1} %", j.change_pct),
                points: vec![Point::new(x, j.latest_mean / scale)],
            });
        }
    }
    chart
}

/// The history page of `title`: the headline plot with the regression verdicts drawn on it,
/// then retransmits, RTT and request/response latency (p50, p99) where measured, the verdict
/// of each series, and the failures.
pub fn history(
    title: &str,
    results: &[PathResult],
    judged: &[Judgement],
    now_unix_ms: u64,
    token: &str,
    csv_link: &str,
) -> String {
    let note = verdict_note(judged);
    let headline = headline_chart(&format!("{title}{note}"), results, judged, now_unix_ms);
    let mut plots = String::new();
    for p in PANELS {
        let c = chart(&format!("{}{note}", p.title), p.unit, results, p.parts, p.div, now_unix_ms);
        let n = c.series.iter().map(|s| s.points.len()).sum::<usize>();
        if n > 0 {
            let _ = write!(plots, "<div id=\"{}\" data-points=\"{n}\">{}</div>", p.id, c.render());
        }
    }
    let measured = results.iter().filter(|r| r.value.is_some()).count();
    let drawn = headline.series.iter().map(|s| s.points.len()).sum::<usize>();
    let tok = if token.is_empty() { String::new() } else { format!("?token={}", esc(token)) };
    let thinned = if drawn < measured {
        format!(" Curves of more than {THIN_ABOVE} results are drawn as {THIN_BUCKETS} spans of time, each as its mean, minimum and maximum.")
    } else {
        String::new()
    };
    let mut body = format!(
        "<p><a href=\"/{tok}\">← grid</a></p><p id=\"counts\">{measured} measured results, {} in all.{thinned} <a href=\"{}\">every result (CSV)</a></p><div id=\"plot\" data-points=\"{measured}\">{}</div>{plots}<h2>verdicts</h2><ul id=\"verdicts\">",
        results.len(),
        esc(csv_link),
        headline.render()
    );
    list_verdicts_and_failures(&mut body, results, judged);
    body.push_str("</ul>");
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>{body}</body></html>",
        esc(title),
        esc(title)
    )
}

/// Every result of a history as CSV (one line each, oldest first).
pub fn csv(results: &[PathResult]) -> String {
    let mut out = String::from(
        "started_utc,started_unix_ms,sender,receiver,test,label,status,metric,value,retransmits,rtt_mean_us,p50_us,p99_us,run,test_id\n",
    );
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let field = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    for r in results {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            report::tables::utc(r.started_unix_ms),
            r.started_unix_ms,
            field(&r.sender),
            field(&r.receiver),
            field(&r.test),
            field(&r.label),
            field(&r.status),
            field(r.metric.as_deref().unwrap_or("")),
            num(r.value),
            num(r.detail.retransmits),
            num(r.detail.rtt_mean_us),
            num(r.detail.p50_us),
            num(r.detail.p99_us),
            r.run,
            r.test_id
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests fail loudly")]

    use super::*;
    use store::Detail;

    fn rr(at: u64, p50: f64, p99: f64) -> PathResult {
        PathResult {
            run: 1,
            test_id: 1,
            started_unix_ms: at,
            test: "tcp-rr".into(),
            label: "rr".into(),
            status: "completed".into(),
            metric: Some("trans_per_s".into()),
            value: Some(1e4),
            sender: "a".into(),
            receiver: "b".into(),
            error: None,
            detail: Detail { p50_us: Some(p50), p99_us: Some(p99), ..Detail::default() },
        }
    }

    fn plot<'a>(page: &'a str, id: &str) -> Option<&'a str> {
        Some(page.split(&format!("id=\"{id}\"")).nth(1)?.split("</svg>").next().unwrap())
    }

    #[test]
    fn rr_latency_percentiles_over_time_and_no_stream_plots() {
        let h = 3_600_000;
        let results: Vec<PathResult> = (0..5).map(|i| rr(i * h, 50.0 + i as f64, 400.0)).collect();
        let page = history("a → b tcp-rr", &results, &[], 5 * h, "", "/cell.csv");
        let latency = plot(&page, "plot-latency").unwrap();
        assert!(latency.starts_with(" data-points=\"10\""), "{latency}");
        for pct in ["p50", "p99"] {
            assert_eq!(latency.matches(&format!("><title>b {pct}: ")).count(), 5, "{pct} of each result");
        }
        assert!(plot(&page, "plot-retransmits").is_none() && plot(&page, "plot-rtt").is_none());
    }

    #[test]
    fn a_year_of_hourly_results_is_drawn_thinned_and_counted_and_all_in_the_csv() {
        let h = 3_600_000;
        let results: Vec<PathResult> = (0..8760).map(|i| rr(i * h, 50.0 + (i % 24) as f64, 400.0)).collect();
        let page = history("a → b tcp-rr", &results, &[], 8760 * h, "", "/cell.csv?x=1&y=2");
        assert!(page.contains("8760 measured results, 8760 in all."), "counts stated");
        assert!(page.contains("drawn as 400 spans") && page.contains("href=\"/cell.csv?x=1&amp;y=2\""));
        let latency = plot(&page, "plot-latency").unwrap();
        let drawn: usize = latency[" data-points=\"".len()..].split('"').next().unwrap().parse().unwrap();
        assert!((2 * 3 * (THIN_BUCKETS - 1)..=2 * 3 * THIN_BUCKETS).contains(&drawn), "{drawn}");
        // Each span's min and max bracket its mean: p50 cycles 50..73 within every span.
        assert_eq!(
            latency.matches("><title>b p50 min: ").count(),
            latency.matches("><title>b p50 max: ").count()
        );
        assert!(latency.contains("><title>b p50 min: ") && latency.contains("><title>b p50 max: "));
        let csv = csv(&results);
        assert_eq!(csv.lines().count(), 8761);
        assert!(csv.lines().nth(1).unwrap().contains(",a,b,tcp-rr,rr,completed,trans_per_s,10000,"));
    }
    #[test]
    fn a_short_history_is_drawn_point_by_point() {
        let results: Vec<PathResult> = (0..THIN_ABOVE as u64).map(|i| rr(i, 1.0, 2.0)).collect();
        let page = history("a → b", &results, &[], 0, "", "/c");
        assert!(!page.contains("spans of time"));
        assert!(plot(&page, "plot-latency")
            .unwrap()
            .starts_with(&format!(" data-points=\"{}\"", 2 * THIN_ABOVE)));
    }
}
