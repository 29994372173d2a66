//! The results archive (DESIGN.md §8): every test and every sweep point is written to SQLite
//! as it completes — WAL journal, `BEGIN IMMEDIATE` writes, schema version in
//! `PRAGMA user_version` — or to a PostgreSQL server a fleet shares (`postgres://…`, schema
//! version in `tcplab_schema`, migrations under an advisory lock). One schema and one list of
//! numbered migrations serve both ([`schema`]); the few differences between the engines live
//! in [`db`]. Every run and test also gets a stable id ([`ids`]) so that [`push`] can copy
//! results between archives without duplicating them. Only this crate knows SQL; everything
//! else sees `results` values.
//!
//! Writing: [`Store::begin_run`], then [`Store::add_test`] per test or [`Store::add_point`]
//! per sweep point (test and point in one transaction, so a kill never leaves half a point),
//! then [`Store::finish_run`]. A run records which process writes it ([`Store::begin_run_by`]),
//! so that one left `running` by a killed process can be told apart ([`owner`],
//! [`Store::prune_abandoned`]); this crate never looks at processes itself. Reading: [`Store::list_runs`], [`Store::load_run`],
//! [`Store::load_sweep`], [`Store::finished_points`], and per path [`Store::path_results`].
#![forbid(unsafe_code)]

pub mod audit;
mod cc;
pub mod db;
pub mod ids;
mod legacy;
pub mod owner;
pub mod paths;
pub mod push;
mod read;
pub mod round;
pub mod schema;
pub mod summary;
mod write;

use std::cell::{RefCell, RefMut};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

use db::{Conn, DbError, Engine, Sql};

pub use audit::HostActivity;
pub use paths::{Detail, PathResult};
pub use push::PushCounts;
pub use read::{coords_of, RunFilter};
pub use results::{Owner, RunSummary};
pub use write::{RunKind, RunStatus};

/// Archive errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database file could not be opened or created.
    #[error("opening the archive {path}: {reason}")]
    Open {
        /// File.
        path: PathBuf,
        /// Cause (shown in the message, not as a source: an error chain would repeat it).
        reason: DbError,
    },
    /// The PostgreSQL server could not be reached, or refused the login.
    #[error("connecting to the archive {url}: {reason}")]
    Connect {
        /// The URL, without its password.
        url: String,
        /// Cause (in the message only).
        reason: DbError,
    },
    /// The directory for the database could not be created.
    #[error("creating the directory {path}: {reason}")]
    Dir {
        /// Directory.
        path: PathBuf,
        /// Cause (in the message only).
        reason: std::io::Error,
    },
    /// An archive opened for reading does not exist (reading never creates one).
    #[error("no archive at {}: nothing has been stored there yet", path.display())]
    Missing {
        /// File.
        path: PathBuf,
    },
    /// The directory of an archive named explicitly does not exist (it is not created: a
    /// mistyped path should not grow a new archive somewhere unexpected).
    #[error("opening the archive {path}: the directory {} does not exist", dir.display())]
    NoDir {
        /// File.
        path: PathBuf,
        /// Its missing directory.
        dir: PathBuf,
    },
    /// The file fails SQLite's integrity check: nothing is written to it.
    #[error("the archive {path} is damaged ({detail}); not writing to it (`sqlite3 {path} .recover` may save its runs)")]
    Damaged {
        /// File.
        path: PathBuf,
        /// The first problem `PRAGMA quick_check` found.
        detail: String,
    },
    /// A statement failed.
    #[error("archive: {context}: {reason}")]
    Sql {
        /// What was being done.
        context: &'static str,
        /// Cause (in the message only).
        reason: DbError,
    },
    /// A stored JSON column did not parse, or a value did not serialise.
    #[error("archive: {what} of run {run}: {reason}")]
    Json {
        /// Which column.
        what: &'static str,
        /// Run id (0 when not known).
        run: i64,
        /// Cause (in the message only).
        reason: serde_json::Error,
    },
    /// No run with this id.
    #[error("no run {0} in the archive")]
    NotFound(i64),
    /// No run with this stable id.
    #[error("no run {0} in the archive")]
    NoUid(String),
    /// The run is not a sweep.
    #[error("run {0} is not a sweep")]
    NotASweep(i64),
    /// The point was stored already (a resumed sweep never runs it twice).
    #[error("point {point} of sweep {run} is stored already")]
    Duplicate {
        /// Run id.
        run: i64,
        /// Point index.
        point: u32,
    },
    /// The system gave no random bytes for a stable id.
    #[error("archive: no random bytes for a stable id: {0}")]
    Random(String),
    /// A read-only archive whose schema is older than this tcplab's: it cannot be upgraded
    /// where it is, and its runs would be read with the wrong columns.
    #[error("the archive {path} has schema version {found} and cannot be upgraded to {known}: it is read-only (copy it somewhere writable, or open it once with write access)")]
    ReadOnlyOld {
        /// File.
        path: PathBuf,
        /// Version in the file.
        found: i64,
        /// Newest version known here.
        known: i64,
    },
    /// A read-only opening found an archive of another schema version.
    #[error("the archive has schema version {found}, this tcplab reads {known} (open it once with `tcplab history --db …` to upgrade it, or upgrade tcplab)")]
    OldSchema {
        /// Version in the archive.
        found: i64,
        /// The version read here.
        known: i64,
    },
    /// The file was written by a newer tcplab.
    #[error("the archive has schema version {found}; this tcplab knows up to {known} (upgrade tcplab)")]
    NewerSchema {
        /// Version in the file.
        found: i64,
        /// Newest version known here.
        known: i64,
    },
}

impl Error {
    /// Whether the archive itself could not be used (opened, created, read as a database or
    /// checked), as opposed to a missing run or a bad request.
    pub fn is_unusable_archive(&self) -> bool {
        matches!(
            self,
            Error::Open { .. }
                | Error::Connect { .. }
                | Error::Dir { .. }
                | Error::NoDir { .. }
                | Error::Missing { .. }
                | Error::Damaged { .. }
                | Error::NewerSchema { .. }
                | Error::ReadOnlyOld { .. }
                | Error::OldSchema { .. }
        )
    }
}

/// Result alias.
pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn sql<E: Into<DbError>>(context: &'static str) -> impl FnOnce(E) -> Error {
    move |reason| Error::Sql { context, reason: reason.into() }
}

/// An open archive: a SQLite file or a PostgreSQL database.
#[derive(Debug)]
pub struct Store {
    conn: RefCell<Conn>,
    path: PathBuf,
    checked: bool,
}

/// A write transaction: rolled back when dropped without [`Tx::commit`].
pub(crate) struct Tx<'a> {
    conn: RefMut<'a, Conn>,
    open: bool,
}

impl Tx<'_> {
    /// Commits.
    pub(crate) fn commit(mut self, context: &'static str) -> Result<()> {
        self.open = false;
        self.conn.batch("COMMIT").map_err(sql(context))
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.batch("ROLLBACK");
        }
    }
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.conn
    }
}

impl std::ops::DerefMut for Tx<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.conn
    }
}

impl Store {
    /// Opens the archive `path` names and migrates it to the newest schema: a PostgreSQL
    /// database when it reads `postgres://…` or `postgresql://…`, else a SQLite file (created
    /// if needed; its directory must exist, [`Error::NoDir`]).
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(url) = path.to_str().filter(|p| db::is_postgres(p)) {
            return Store::open_postgres(url);
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.is_dir()) {
            return Err(Error::NoDir { path: path.to_path_buf(), dir: dir.to_path_buf() });
        }
        Store::open_file(path)
    }

    /// [`Store::open`], creating the directory of a SQLite file first if needed (the default
    /// archive's).
    pub fn open_creating_dir(path: &Path) -> Result<Store> {
        if path.to_str().is_some_and(db::is_postgres) {
            return Store::open(path);
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|reason| Error::Dir { path: dir.to_path_buf(), reason })?;
        }
        Store::open_file(path)
    }

    /// Connects to the PostgreSQL archive at `url` and migrates it (under a lock: any number
    /// of hosts may open a new database at once).
    pub fn open_postgres(url: &str) -> Result<Store> {
        let shown = db::redact(url);
        let pg = db::Pg::connect(url).map_err(|reason| Error::Connect { url: shown.clone(), reason })?;
        let mut conn = Conn::Postgres(Box::new(pg));
        schema::migrate_any(&mut conn, schema::latest())?;
        Ok(Store { conn: RefCell::new(conn), path: PathBuf::from(shown), checked: true })
    }

    fn open_file(path: &Path) -> Result<Store> {
        let open_err =
            |reason: rusqlite::Error| Error::Open { path: path.to_path_buf(), reason: reason.into() };
        let mut conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(open_err)?;
        wal_mode(&conn).map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(open_err)?;
        schema::migrate(&mut conn)?;
        Ok(Store { conn: RefCell::new(Conn::Sqlite(conn)), path: path.to_path_buf(), checked: false })
    }

    /// Opens an archive for reading only: a SQLite file is never created, migrated or switched
    /// to WAL, so a file on a read-only mount or without write permission can be listed and
    /// shown; a PostgreSQL session is made read-only (the dashboard).
    /// (The reading commands use it when [`Store::open`] cannot write to the file.)
    pub fn open_read_only(path: &Path) -> Result<Store> {
        if let Some(url) = path.to_str().filter(|p| db::is_postgres(p)) {
            // The dashboard and the reading commands: a read-only session, nothing migrated.
            let shown = db::redact(url);
            let pg = db::Pg::connect(url).map_err(|reason| Error::Connect { url: shown.clone(), reason })?;
            let mut conn = Conn::Postgres(Box::new(pg));
            conn.batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                .map_err(sql("making the session read-only"))?;
            let found = schema::version_any(&mut conn)?;
            if found != schema::latest() {
                return Err(Error::OldSchema { found, known: schema::latest() });
            }
            return Ok(Store { conn: RefCell::new(conn), path: PathBuf::from(shown), checked: true });
        }
        if !path.exists() {
            return Err(Error::Missing { path: path.to_path_buf() });
        }
        let conn = read_only_connection(path)?;
        let (found, known) = (schema::version(&conn)?, schema::latest());
        if found > known {
            return Err(Error::NewerSchema { found, known });
        }
        if found < known {
            return Err(Error::ReadOnlyOld { path: path.to_path_buf(), found, known });
        }
        // `checked` stays false: a write would run the integrity check first, and fail on
        // the read-only connection with SQLite's own message.
        Ok(Store { conn: RefCell::new(Conn::Sqlite(conn)), path: path.to_path_buf(), checked: false })
    }

    /// Which engine holds this archive.
    pub fn engine(&self) -> Engine {
        self.conn.borrow().engine()
    }

    /// The connection, for one read.
    pub(crate) fn conn(&self) -> RefMut<'_, Conn> {
        self.conn.borrow_mut()
    }

    /// Starts a write transaction.
    pub(crate) fn immediate(&self) -> Result<Tx<'_>> {
        let mut conn = self.conn.borrow_mut();
        let begin = db::begin(conn.engine());
        conn.batch(begin).map_err(sql("starting a write"))?;
        Ok(Tx { conn, open: true })
    }

    /// Before the first write: refuses a damaged file (`PRAGMA quick_check`, which reads every
    /// page once but skips the index cross-checks of `integrity_check`), so that results are
    /// not added to an archive that may lose them. (A PostgreSQL server checks itself.)
    pub(crate) fn check_before_writing(&mut self) -> Result<()> {
        if self.checked {
            return Ok(());
        }
        let verdict = self
            .conn()
            .query_row("PRAGMA quick_check(1)", &[])
            .and_then(|r| r.text(0))
            .map_err(|reason| Error::Damaged { path: self.path.clone(), detail: reason.to_string() })?;
        if verdict != "ok" {
            return Err(Error::Damaged { path: self.path.clone(), detail: verdict });
        }
        self.checked = true;
        Ok(())
    }

    /// The file, or for PostgreSQL the URL without its password.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open archive.
    pub fn schema_version(&self) -> Result<i64> {
        schema::version_any(&mut *self.conn())
    }
}

/// A read-only connection to `path`. A WAL archive needs its `-shm` index, which a reader
/// cannot create in a read-only directory; when there is no unmerged `-wal` either (the
/// archive was closed cleanly), the file alone is the whole archive and is opened as
/// immutable (no locks, no index).
fn read_only_connection(path: &Path) -> Result<Connection> {
    let open_err = |reason: rusqlite::Error| Error::Open { path: path.to_path_buf(), reason: reason.into() };
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
    conn.busy_timeout(Duration::from_secs(10)).map_err(open_err)?;
    let readable = schema::version(&conn);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let unmerged = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
    if readable.is_ok() || unmerged {
        return readable.map(|_| conn);
    }
    let mut uri = url_path(path);
    uri.push_str("?immutable=1");
    let conn =
        Connection::open_with_flags(&uri, flags | rusqlite::OpenFlags::SQLITE_OPEN_URI).map_err(open_err)?;
    schema::version(&conn)?;
    Ok(conn)
}

/// `file:` URI of `path`, the characters a URI gives meaning to and non-ASCII bytes escaped.
fn url_path(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'?' | b'#' | b'%' | 0x80.. => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(char::from(*b)),
        }
    }
    uri
}

/// Switches to WAL. The switch needs an exclusive lock and SQLite answers SQLITE_BUSY at once,
/// without its busy handler, while another process holds the file (several tcplab commands
/// opening a new archive together): retry for as long as the busy timeout.
fn wal_mode(conn: &Connection) -> rusqlite::Result<()> {
    let give_up = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && std::time::Instant::now() < give_up =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// The archive named by the `TCPLAB_DB` environment variable (a path or a `postgres://` URL),
/// if set and not empty.
pub fn env_path() -> Option<PathBuf> {
    std::env::var_os("TCPLAB_DB").filter(|s| !s.is_empty()).map(PathBuf::from)
}

/// The default archive: `$XDG_DATA_HOME/tcplab/results.db`, else
/// `$HOME/.local/share/tcplab/results.db`. `None` when neither variable is set.
pub fn default_path() -> Option<PathBuf> {
    let from = |v: &str| std::env::var_os(v).filter(|s| !s.is_empty()).map(PathBuf::from);
    let base = from("XDG_DATA_HOME").or_else(|| from("HOME").map(|h| h.join(".local").join("share")))?;
    Some(base.join("tcplab").join("results.db"))
}
