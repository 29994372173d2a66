//! Opening an HTML file in headless Chromium and reading back what rendered.
//!
//! No DevTools protocol: a copy of the page gets two small scripts — one at the top that
//! records errors (script errors, failed resource loads) and `console.error` calls, one at
//! the end that, once the page has loaded, opens every `<details>`, measures every
//! `svg.plot` and counts resource fetches — and `--dump-dom` prints the DOM with the
//! findings in `<pre id="tlh-check">`.
//! Console output of any kind also shows on stderr (`--enable-logging=stderr`) as
//! `:CONSOLE` lines; the report itself has no scripts, so any such line is an error.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the browser saw.
#[derive(Debug, PartialEq, Eq)]
pub struct Rendered {
    /// `svg.plot` elements in the DOM.
    pub plots: usize,
    /// Plots with a laid-out size and at least one drawn mark.
    pub drawn: usize,
    /// Resources the page fetched.
    pub fetches: usize,
    /// Errors and console.error calls caught in the page.
    pub errors: usize,
    /// Console lines on Chromium's stderr.
    pub console: Vec<String>,
}

const HEAD_HOOK: &str = r#"<script>window.__tlh=[];addEventListener('error',function(e){__tlh.push(String(e.message||(e.target&&(e.target.src||e.target.href))))},true);(function(c){console.error=function(){__tlh.push([].join.call(arguments,' '));c.apply(console,arguments)}})(console.error);</script>"#;

const BODY_CHECK: &str = r#"<script>addEventListener('load',function(){document.querySelectorAll('details').forEach(function(d){d.open=true});var s=document.querySelectorAll('svg.plot'),n=0;s.forEach(function(p){var r=p.getBoundingClientRect();if(r.width>100&&r.height>100&&p.querySelectorAll('polyline,rect,circle,path').length>0)n++});var o=document.createElement('pre');o.id='tlh-check';o.textContent='plots='+s.length+' drawn='+n+' fetches='+performance.getEntriesByType('resource').length+' errors='+__tlh.length+' ['+__tlh.join(' | ')+']';document.body.appendChild(o)});</script>"#;

/// The Chromium binary, if installed.
pub fn binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
        .find(|p| p.is_file())
}

/// Renders `html` (a file) in headless Chromium; `None` when Chromium is not installed.
pub fn render(html: &Path, work: &Path) -> Option<Rendered> {
    let bin = binary()?;
    let page = std::fs::read_to_string(html).unwrap();
    let page = page.replacen("<head>", &format!("<head>{HEAD_HOOK}"), 1).replacen(
        "</body>",
        &format!("{BODY_CHECK}</body>"),
        1,
    );
    let copy = work.join("checked.html");
    std::fs::write(&copy, page).unwrap();
    let out_path = work.join("dom.txt");
    let err_path = work.join("chromium.stderr");
    let mut child = Command::new(bin)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions"])
        .args(["--enable-logging=stderr", "--v=0", "--window-size=1280,1000", "--dump-dom"])
        .arg(format!("--user-data-dir={}", work.join("profile").display()))
        .arg(format!("file://{}", copy.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let dom = std::fs::read_to_string(&out_path).unwrap();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    Some(parse(&dom, &stderr))
}

fn parse(dom: &str, stderr: &str) -> Rendered {
    let check =
        dom.split("<pre id=\"tlh-check\">").nth(1).and_then(|s| s.split("</pre>").next()).unwrap_or_else(
            || panic!("the check script did not run; DOM was:\n{}", &dom[..dom.len().min(2000)]),
        );
    let field = |name: &str| -> usize {
        check
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {check}"))
    };
    let console = stderr.lines().filter(|l| l.contains(":CONSOLE")).map(String::from).collect();
    Rendered {
        plots: field("plots"),
        drawn: field("drawn"),
        fetches: field("fetches"),
        errors: field("errors"),
        console,
    }
}

/// Checks that `html` renders `plots` plots, all drawn, with no fetch and no error; skips
/// (with a message) when Chromium is missing, unless running in CI.
pub fn assert_renders(html: &Path, work: &Path, plots: usize) {
    let Some(r) = render(html, work) else {
        assert!(std::env::var_os("CI").is_none(), "chromium is required in CI (.ci/packages)");
        eprintln!("skipped the browser check of {}: chromium is not installed", html.display());
        return;
    };
    assert_eq!(
        r,
        Rendered { plots, drawn: plots, fetches: 0, errors: 0, console: Vec::new() },
        "{}",
        html.display()
    );
}
