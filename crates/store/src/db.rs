//! The one place that tells SQLite and PostgreSQL apart. Every statement of this crate is
//! written once, in the SQL both engines share, with `?N` placeholders; [`Sql`] runs it on
//! either engine, translating the few differences here: placeholders (`$N`), `instr` (`strpos`)
//! and, in schema text, column types (`INTEGER` → `BIGINT`, `REAL` → `DOUBLE PRECISION`, a
//! rowid key `id INTEGER PRIMARY KEY` → an identity column). Values cross as [`Value`], rows
//! come back as [`Row`]s of them.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::Duration;

use postgres::types::{IsNull, ToSql, Type};

/// Which engine holds an archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A local file.
    Sqlite,
    /// A shared server.
    Postgres,
}

/// Why a statement failed (the engine's own message).
#[derive(Debug)]
pub enum DbError {
    /// From SQLite.
    Sqlite(rusqlite::Error),
    /// From PostgreSQL (connection or statement).
    Postgres(postgres::Error),
    /// A column did not hold what the statement promised.
    Column {
        /// Column index.
        index: usize,
        /// What was expected.
        wanted: &'static str,
    },
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Sqlite(e) => write!(f, "{e}"),
            DbError::Postgres(e) => match e.as_db_error() {
                Some(db) => write!(f, "{}", db.message()),
                None => {
                    write!(f, "{e}")?;
                    let mut cause = std::error::Error::source(e);
                    while let Some(c) = cause {
                        write!(f, ": {c}")?;
                        cause = c.source();
                    }
                    Ok(())
                }
            },
            DbError::Column { index, wanted } => write!(f, "column {index} is not {wanted}"),
        }
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError::Sqlite(e)
    }
}

impl From<postgres::Error> for DbError {
    fn from(e: postgres::Error) -> Self {
        DbError::Postgres(e)
    }
}

/// A value bound to a statement or read from a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An integer (booleans are 0 and 1).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<u32> for Value {
    fn from(v: u32) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Int(i64::from(v))
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
    }
}
impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Self {
        Value::Text(v.clone())
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// Statement parameters from a list of expressions convertible to [`Value`].
macro_rules! args {
    ($($v:expr),* $(,)?) => { &[$($crate::db::Value::from($v)),*][..] };
}
pub(crate) use args;

/// One result row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row(pub Vec<Value>);

impl Row {
    fn at(&self, index: usize) -> &Value {
        self.0.get(index).unwrap_or(&Value::Null)
    }

    /// An integer column, or NULL.
    pub fn opt_i64(&self, index: usize) -> Result<Option<i64>, DbError> {
        match self.at(index) {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(*v)),
            _ => Err(DbError::Column { index, wanted: "an integer" }),
        }
    }

    /// An integer column.
    pub fn i64(&self, index: usize) -> Result<i64, DbError> {
        self.opt_i64(index)?.ok_or(DbError::Column { index, wanted: "an integer" })
    }

    /// A number column, or NULL.
    pub fn opt_f64(&self, index: usize) -> Result<Option<f64>, DbError> {
        match self.at(index) {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(*v as f64)),
            Value::Real(v) => Ok(Some(*v)),
            Value::Text(_) => Err(DbError::Column { index, wanted: "a number" }),
        }
    }

    /// A text column, or NULL.
    pub fn opt_text(&self, index: usize) -> Result<Option<String>, DbError> {
        match self.at(index) {
            Value::Null => Ok(None),
            Value::Text(t) => Ok(Some(t.clone())),
            _ => Err(DbError::Column { index, wanted: "text" }),
        }
    }

    /// A text column.
    pub fn text(&self, index: usize) -> Result<String, DbError> {
        self.opt_text(index)?.ok_or(DbError::Column { index, wanted: "text" })
    }
}

/// Statements on either engine. Implemented by a SQLite connection, a PostgreSQL client and
/// [`Conn`] (either).
pub trait Sql {
    /// Which engine.
    fn engine(&self) -> Engine;
    /// Runs one statement; the number of rows changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs one query; all its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Runs statements without parameters (schema text is translated).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;

    /// The first row, if any.
    fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// The first row; a query that returns none is a bug of this crate, read as NULLs.
    fn query_row(&mut self, sql: &str, params: &[Value]) -> Result<Row, DbError> {
        Ok(self.query_opt(sql, params)?.unwrap_or(Row(Vec::new())))
    }
}

/// `sql` for `engine`: placeholders and functions.
pub fn statement(engine: Engine, sql: &str) -> Cow<'_, str> {
    if engine == Engine::Sqlite {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        let numbered = c == '?' && chars.peek().is_some_and(char::is_ascii_digit);
        out.push(if numbered { '$' } else { c });
    }
    Cow::Owned(out.replace("instr(", "strpos("))
}

/// Schema text for `engine`: column types.
pub fn schema_text(engine: Engine, ddl: &str) -> Cow<'_, str> {
    if engine == Engine::Sqlite {
        return Cow::Borrowed(ddl);
    }
    let key =
        ddl.replace(" id INTEGER PRIMARY KEY", " id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
    let words: Vec<String> = key
        .split_inclusive(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .map(|w| {
            let (word, sep) =
                w.split_at(w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_').len());
            let word = match word {
                "INTEGER" => "BIGINT",
                "REAL" => "DOUBLE PRECISION",
                other => other,
            };
            format!("{word}{sep}")
        })
        .collect();
    Cow::Owned(words.concat())
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(v) => ValueRef::Integer(*v),
            Value::Real(v) => ValueRef::Real(*v),
            Value::Text(t) => ValueRef::Text(t.as_bytes()),
        }))
    }
}

fn sqlite_value(v: rusqlite::types::ValueRef<'_>, index: usize) -> Result<Value, DbError> {
    use rusqlite::types::ValueRef;
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(
            String::from_utf8(t.to_vec()).map_err(|_| DbError::Column { index, wanted: "UTF-8 text" })?,
        ),
        ValueRef::Blob(_) => return Err(DbError::Column { index, wanted: "a blob" }),
    })
}

impl Sql for rusqlite::Connection {
    fn engine(&self) -> Engine {
        Engine::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let mut stmt = self.prepare_cached(sql)?;
        Ok(stmt.execute(rusqlite::params_from_iter(params.iter()))? as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let mut stmt = self.prepare_cached(sql)?;
        let n = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(Row((0..n).map(|i| sqlite_value(r.get_ref(i)?, i)).collect::<Result<_, DbError>>()?));
        }
        Ok(out)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        Ok(self.execute_batch(sql)?)
    }
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match (self, ty) {
            (Value::Null, _) => Ok(IsNull::Yes),
            (Value::Int(v), &Type::INT4) => i32::try_from(*v)?.to_sql(ty, out),
            (Value::Int(v), &Type::INT2) => i16::try_from(*v)?.to_sql(ty, out),
            (Value::Int(v), &Type::FLOAT8) => (*v as f64).to_sql(ty, out),
            (Value::Int(v), &Type::BOOL) => (*v != 0).to_sql(ty, out),
            (Value::Int(v), &Type::TEXT) => v.to_string().to_sql(ty, out),
            (Value::Int(v), _) => v.to_sql(ty, out),
            (Value::Real(v), &Type::FLOAT4) => (*v as f32).to_sql(ty, out),
            (Value::Real(v), _) => v.to_sql(ty, out),
            (Value::Text(t), _) => t.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

fn pg_value(row: &postgres::Row, index: usize) -> Result<Value, DbError> {
    let ty = row.columns().get(index).map(|c| c.type_().clone()).unwrap_or(Type::TEXT);
    let v = match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(index)?.into(),
        Type::INT4 => row.try_get::<_, Option<i32>>(index)?.map(i64::from).into(),
        Type::INT2 => row.try_get::<_, Option<i16>>(index)?.map(i64::from).into(),
        Type::BOOL => row.try_get::<_, Option<bool>>(index)?.into(),
        Type::FLOAT8 => row.try_get::<_, Option<f64>>(index)?.into(),
        Type::FLOAT4 => row.try_get::<_, Option<f32>>(index)?.map(f64::from).into(),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
            row.try_get::<_, Option<String>>(index)?.into()
        }
        _ => return Err(DbError::Column { index, wanted: "of a type this crate reads" }),
    };
    Ok(v)
}

/// A PostgreSQL connection, with its statements prepared once.
pub struct Pg {
    client: postgres::Client,
    prepared: HashMap<String, postgres::Statement>,
}

impl std::fmt::Debug for Pg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pg").field("prepared", &self.prepared.len()).finish()
    }
}

impl Pg {
    /// Connects to `url` (`postgres://user@host/db`), without TLS, giving up after 10 s unless
    /// the URL sets `connect_timeout`.
    pub fn connect(url: &str) -> Result<Pg, DbError> {
        let mut config: postgres::Config = url.parse()?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        let client = config.connect(postgres::NoTls)?;
        Ok(Pg { client, prepared: HashMap::new() })
    }

    fn prepared(&mut self, sql: &str) -> Result<postgres::Statement, DbError> {
        let text = statement(Engine::Postgres, sql);
        if let Some(s) = self.prepared.get(text.as_ref()) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(&text)?;
        self.prepared.insert(text.into_owned(), s.clone());
        Ok(s)
    }
}

fn pg_params(params: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Sql for Pg {
    fn engine(&self) -> Engine {
        Engine::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let stmt = self.prepared(sql)?;
        Ok(self.client.execute(&stmt, &pg_params(params))?)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let stmt = self.prepared(sql)?;
        let rows = self.client.query(&stmt, &pg_params(params))?;
        rows.iter()
            .map(|r| (0..r.len()).map(|i| pg_value(r, i)).collect::<Result<Vec<_>, _>>().map(Row))
            .collect()
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        Ok(self.client.batch_execute(&schema_text(Engine::Postgres, sql))?)
    }
}

/// An open archive connection, either engine.
#[derive(Debug)]
pub enum Conn {
    /// SQLite file.
    Sqlite(rusqlite::Connection),
    /// PostgreSQL server.
    Postgres(Box<Pg>),
}

impl Sql for Conn {
    fn engine(&self) -> Engine {
        match self {
            Conn::Sqlite(_) => Engine::Sqlite,
            Conn::Postgres(_) => Engine::Postgres,
        }
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        match self {
            Conn::Sqlite(c) => c.execute(sql, params),
            Conn::Postgres(c) => c.execute(sql, params),
        }
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(c) => Sql::query(c, sql, params),
            Conn::Postgres(c) => c.query(sql, params),
        }
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(c) => c.batch(sql),
            Conn::Postgres(c) => c.batch(sql),
        }
    }
}

/// The statement that starts a write transaction: SQLite takes its write lock at once, so two
/// writers never deadlock upgrading a read lock.
pub fn begin(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "BEGIN IMMEDIATE",
        Engine::Postgres => "BEGIN",
    }
}

/// `url` without its password, for messages.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let Some((userinfo, host)) = rest.split_once('@') else { return url.to_string() };
    let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
    format!("{scheme}://{user}@{host}")
}

/// Whether `spec` names a PostgreSQL archive (`postgres://…` or `postgresql://…`).
pub fn is_postgres(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_functions_are_translated_for_postgres() {
        let q = "SELECT 1 FROM runs WHERE id = ?1 AND instr(server, ?12) > 0 AND x = '?'";
        assert_eq!(statement(Engine::Sqlite, q), q);
        assert_eq!(
            statement(Engine::Postgres, q),
            "SELECT 1 FROM runs WHERE id = $1 AND strpos(server, $12) > 0 AND x = '?'"
        );
    }

    #[test]
    fn column_types_are_translated_for_postgres() {
        let ddl = "CREATE TABLE t (\n    id INTEGER PRIMARY KEY,\n    run_id INTEGER NOT NULL,\n    v REAL,\n    interval_real TEXT\n);";
        assert_eq!(schema_text(Engine::Sqlite, ddl), ddl);
        assert_eq!(
            schema_text(Engine::Postgres, ddl),
            "CREATE TABLE t (\n    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,\n    run_id BIGINT NOT NULL,\n    v DOUBLE PRECISION,\n    interval_real TEXT\n);"
        );
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(redact("postgres://u:secret@h:5432/db"), "postgres://u@h:5432/db");
        assert_eq!(redact("postgresql://h/db"), "postgresql://h/db");
        assert!(is_postgres("postgresql://h/db") && !is_postgres("/tmp/postgres://x"));
    }
}
