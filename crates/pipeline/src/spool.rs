//! The local spool of scheduled rounds (`--every`): each round is written to a SQLite file on
//! this host, always reachable, and copied to the shared archive (by stable id, as `archive
//! push` does) while the round runs and when it ends. When the archive cannot be reached the
//! results wait in the file; every later push sends what is missing, and a file whose every
//! result reached the archive is removed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use store::{PushCounts, Store};

/// Tests per transaction on the archive.
const BATCH: usize = 500;

/// The spool for one archive.
#[derive(Debug, Clone)]
pub struct Spool {
    /// The SQLite file rounds are written to.
    pub file: PathBuf,
    /// The archive it is pushed to (a file or a `postgres://` URL).
    pub archive: PathBuf,
}

impl Spool {
    /// The spool of `archive` in `dir` (one file per archive, named after it).
    pub fn new(dir: &Path, archive: &Path) -> Spool {
        let shown = store::db::redact(&archive.to_string_lossy());
        let name: String = shown
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' })
            .collect();
        Spool { file: dir.join(format!("spool-{name}.db")), archive: archive.to_path_buf() }
    }

    /// The spool of the archive `s` chooses (`None` with `--no-store`): in `s.spool_dir`, else `$TCPLAB_SPOOL`, else
    /// in the data directory beside the default archive. The directory is made when written.
    pub fn of(s: &crate::Storage) -> Result<Option<Spool>> {
        if s.disabled {
            return Ok(None);
        }
        let archive =
            s.db.clone()
                .or_else(store::env_path)
                .or_else(store::default_path)
                .context("no XDG_DATA_HOME or HOME to put the archive in; use --db PATH or --no-store")?;
        let dir = match s.spool_dir.clone().or_else(|| std::env::var_os("TCPLAB_SPOOL").map(PathBuf::from)) {
            Some(d) => d,
            None => store::default_path()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .context("no XDG_DATA_HOME or HOME for the spool; use --spool-dir DIR")?,
        };
        let remote = Spool { file: PathBuf::new(), archive: archive.clone() }.is_remote();
        // A file archive is named by its absolute path: the same spool from any directory.
        let archive = if remote { archive } else { std::path::absolute(&archive).unwrap_or(archive) };
        Ok(Some(Spool::new(&dir, &archive)))
    }

    /// Whether the archive is a PostgreSQL server (scheduled rounds then write to the spool
    /// first and push it, so a round measured while the server is down waits here).
    pub fn is_remote(&self) -> bool {
        self.archive.to_str().is_some_and(|p| p.starts_with("postgres://") || p.starts_with("postgresql://"))
    }

    /// Whether results wait in the spool.
    pub fn is_pending(&self) -> bool {
        self.file.exists()
    }

    /// Copies what the archive lacks; the spool is kept.
    pub fn push(&self) -> Result<PushCounts> {
        let from =
            Store::open(&self.file).with_context(|| format!("opening the spool {}", self.file.display()))?;
        let mut to = Store::open(&self.archive)?;
        Ok(from.push_to(&mut to, BATCH, &mut |_| {})?)
    }

    /// Pushes, then removes the spool (nothing to do when none waits).
    pub fn flush(&self) -> Result<Option<PushCounts>> {
        if !self.is_pending() {
            return Ok(None);
        }
        let counts = self.push()?;
        for suffix in ["", "-wal", "-shm"] {
            let mut f = self.file.clone().into_os_string();
            f.push(suffix);
            match std::fs::remove_file(&f) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("removing {}", Path::new(&f).display()))
                }
                _ => {}
            }
        }
        Ok(Some(counts))
    }
}

impl Spool {
    /// Runs `f` (a round writing to the spool) while a thread pushes the spool to the archive
    /// every `period`, so the archive's readers see the round as it runs; failures of these
    /// pushes are left to [`Spool::flush_and_say`] after the round.
    pub fn pushing_while<T>(&self, period: std::time::Duration, f: impl FnOnce() -> T) -> T {
        use std::sync::atomic::{AtomicBool, Ordering};
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let tick = std::time::Duration::from_millis(50);
                let mut waited = std::time::Duration::ZERO;
                while !done.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    waited += tick;
                    if waited >= period && self.is_pending() {
                        waited = std::time::Duration::ZERO;
                        let _ = self.push();
                    }
                }
            });
            let out = f();
            done.store(true, Ordering::Relaxed);
            out
        })
    }

    /// Delivers what waits in the spool of the archive `s` chooses (nothing with `--no-store`),
    /// saying so on stderr. A resume calls it before it reads the archive, so that the points
    /// an earlier session left in the spool count as done.
    pub fn deliver(s: &crate::Storage) {
        if let Ok(Some(spool)) = Spool::of(s) {
            spool.flush_and_say();
        }
    }

    /// [`Spool::flush`], saying on stderr what happened: pushed, or why the results wait.
    pub fn flush_and_say(&self) {
        match self.flush() {
            Ok(Some(c)) => eprintln!(
                "spool: pushed {} test(s) ({} new run(s)) to {}",
                c.tests_pushed,
                c.runs_new,
                store::db::redact(&self.archive.to_string_lossy())
            ),
            Ok(None) => {}
            Err(e) => eprintln!(
                "spool: the archive cannot take the results now ({e:#}); they wait in {} and are delivered by the next run or `tcplab archive push`",
                self.file.display()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_archive_has_one_spool_whichever_way_it_is_named() {
        let at = |db: PathBuf| crate::Storage { db: Some(db), disabled: false, spool_dir: Some("/s".into()) };
        let cwd = std::env::current_dir().unwrap_or_default();
        let relative = Spool::of(&at("x/a.db".into())).ok().flatten().map(|s| s.file);
        let absolute = Spool::of(&at(cwd.join("x/a.db"))).ok().flatten().map(|s| s.file);
        assert!(relative.is_some());
        assert_eq!(relative, absolute);
        let url = Spool::of(&at("postgres://u:secret@h/db".into())).ok().flatten().map(|s| s.file);
        assert!(url.is_some_and(|f| !f.to_string_lossy().contains("secret")), "no password in the name");
        assert!(Spool::of(&crate::Storage { disabled: true, ..at("a.db".into()) }).is_ok_and(|s| s.is_none()));
    }
}
