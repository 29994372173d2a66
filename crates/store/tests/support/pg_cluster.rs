//! A real PostgreSQL server for tests: a new cluster in a temporary directory, from the
//! Debian package's binaries (`/usr/lib/postgresql/*/bin`), listening on a loopback port.
//! One per test binary ([`shared`]). A shell keeper started with the cluster owns the server:
//! it stops and starts it on request (`stop`, `start` on its stdin) and, when its stdin closes
//! — the test process ended, whether it passed, failed or panicked — stops the server and
//! removes the directory. As root (initdb refuses root) the server runs as the `postgres` user.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

/// A running cluster.
#[derive(Debug)]
pub struct Cluster {
    pub port: u16,
    bin: PathBuf,
    keeper: Mutex<(Child, ChildStdin, BufReader<ChildStdout>)>,
}

const KEEPER: &str = r#"
set -u
bin=$1; port=$2
d=$(mktemp -d /tmp/tcplab-pg.XXXXXX) || exit 1
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres "$d"
# Fast shutdown, sent to the postmaster itself: a background job of this shell ignores SIGINT.
stop() { [ -n "${pid:-}" ] || return 0; kill -INT "$(head -1 "$d/data/postmaster.pid")" 2>/dev/null; wait "$pid"; pid=; }
trap 'stop; rm -rf "$d"' EXIT
as_pg "$bin/initdb" -D "$d/data" -A trust -U postgres --no-sync >"$d/initdb.log" 2>&1 || { echo "failed: initdb: $(tail -3 "$d/initdb.log")"; exit 1; }
start() {
  as_pg "$bin/postgres" -D "$d/data" -k "$d" -p "$port" -c listen_addresses=127.0.0.1 -c fsync=off \
    -c synchronous_commit=off -c full_page_writes=off -c max_connections=100 >>"$d/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -t 1 && { echo started; return; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "failed: server did not start: $(tail -3 "$d/server.log")"
}
start
while read -r cmd; do
  case $cmd in
    stop) stop; echo stopped ;;
    start) start ;;
  esac
done
"#;

/// The directory holding `initdb`, `postgres` and `pg_isready`, if PostgreSQL is installed.
fn binaries() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .collect();
    dirs.sort_by_key(|d| {
        d.parent().and_then(|p| p.file_name()).and_then(|n| n.to_str()?.parse::<u32>().ok())
    });
    dirs.reverse();
    let from_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|d| std::fs::canonicalize(d.join("initdb")).ok()?.parent().map(PathBuf::from));
    dirs.into_iter()
        .chain(from_path)
        .find(|d| ["initdb", "postgres", "pg_isready", "psql"].iter().all(|b| d.join(b).is_file()))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Cluster {
    /// Starts a cluster, or says why it cannot.
    pub fn start() -> Result<Cluster, String> {
        let bin = binaries().ok_or("no PostgreSQL binaries (install the postgresql package)")?;
        let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
        if root && Command::new("id").arg("postgres").output().map(|o| !o.status.success()).unwrap_or(true) {
            return Err("running as root and there is no postgres user to run the server as".into());
        }
        let port = free_port();
        let mut child = Command::new("sh")
            .args(["-c", KEEPER, "keeper"])
            .arg(&bin)
            .arg(port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting sh: {e}"))?;
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let cluster = Cluster { port, bin, keeper: Mutex::new((child, stdin, stdout)) };
        cluster.answer("started")?;
        Ok(cluster)
    }

    fn answer(&self, want: &str) -> Result<(), String> {
        let mut k = self.keeper.lock().unwrap();
        let mut line = String::new();
        k.2.read_line(&mut line).map_err(|e| e.to_string())?;
        if line.trim() == want {
            Ok(())
        } else {
            Err(format!("PostgreSQL keeper: {}", line.trim()))
        }
    }

    fn tell(&self, cmd: &str, want: &str) {
        writeln!(self.keeper.lock().unwrap().1, "{cmd}").unwrap();
        self.answer(want).unwrap();
    }

    /// Stops the server (fast shutdown); the cluster stays.
    pub fn stop(&self) {
        self.tell("stop", "stopped");
    }

    /// Starts the server again.
    pub fn restart(&self) {
        self.tell("start", "started");
    }

    /// The URL of database `db`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// A new empty database; its URL.
    pub fn new_db(&self, name: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-q",
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-c",
            ])
            .arg(format!("CREATE DATABASE \"{name}\""))
            .output()
            .unwrap();
        assert!(out.status.success(), "CREATE DATABASE {name}: {}", String::from_utf8_lossy(&out.stderr));
        self.url(name)
    }

    /// A new empty database; its URL over the cluster's Unix socket (reachable from every
    /// network namespace, unlike its loopback port).
    pub fn socket_url(&self, name: &str) -> String {
        self.new_db(name);
        let socket = format!(".s.PGSQL.{}", self.port);
        let dir = std::fs::read_dir("/tmp")
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("tcplab-pg."))
                    && p.join(&socket).exists()
            })
            .expect("the cluster's socket directory");
        format!("postgres://postgres@/{name}?host={}&port={}", dir.display(), self.port)
    }

    /// One value from `sql` on database `db` (psql, unaligned).
    pub fn query(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-qAt",
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                db,
                "-c",
                sql,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// The test binary's cluster, started on first use; `None` (with the reason printed once) when
/// PostgreSQL cannot be run here.
pub fn shared() -> Option<&'static Cluster> {
    static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
    match CLUSTER.get_or_init(Cluster::start) {
        Ok(c) => Some(c),
        Err(reason) => {
            eprintln!("skipped: {reason}");
            None
        }
    }
}

/// Waits until `f` is true, up to `limit`.
pub fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Tests that need the server up hold this (shared) for their duration; a test that stops
/// the server holds it exclusively.
static UP: RwLock<()> = RwLock::new(());

/// The server stays up while this is held.
pub fn up() -> RwLockReadGuard<'static, ()> {
    UP.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// No other test uses the server while this is held (it may be stopped and restarted).
pub fn alone() -> RwLockWriteGuard<'static, ()> {
    UP.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}
