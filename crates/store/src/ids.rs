//! Stable ids. A row's integer id belongs to one archive (run 12 here may be run 4,012 in the
//! fleet's); its `uid` — 128 random bits written as a UUID (version 4), given when the run or
//! test is first written, that is when it is measured — is the same in every archive it is
//! copied to, and unique in each. [`crate::push`] copies by it, so re-sending a result never
//! duplicates it.

use crate::db::{args, Sql};
use crate::{sql, Error, Result};

/// A new random stable id: `xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`.
pub fn new_uid() -> Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| Error::Random(e.to_string()))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]))
}

/// Whether `text` looks like a stable id (so `show` can tell one from a run number).
pub fn is_uid(text: &str) -> bool {
    text.len() == 36
        && text.char_indices().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// Migration 7's data step: a uid for every stored run and test, each run's host, then the
/// indexes (unique on uid).
pub(crate) fn backfill(tx: &mut dyn Sql) -> Result<()> {
    for table in ["runs", "tests"] {
        let ids = tx
            .query(&format!("SELECT id FROM {table} WHERE uid IS NULL"), &[])
            .map_err(sql("reading ids"))?;
        for row in ids {
            let id = row.i64(0).map_err(sql("reading ids"))?;
            tx.execute(&format!("UPDATE {table} SET uid = ?1 WHERE id = ?2"), args![new_uid()?, id])
                .map_err(sql("giving stable ids"))?;
        }
    }
    backfill_hosts(tx)?;
    tx.batch(
        "CREATE UNIQUE INDEX runs_uid ON runs (uid);
         CREATE UNIQUE INDEX tests_uid ON tests (uid);
         CREATE INDEX runs_host ON runs (host, started_unix_ms);",
    )
    .map_err(sql("indexing stable ids"))
}

/// `runs.host` of stored runs: the owner's host name, else the host facts' `hostname`.
fn backfill_hosts(tx: &mut dyn Sql) -> Result<()> {
    tx.execute("UPDATE runs SET host = owner_host WHERE owner_host IS NOT NULL AND owner_host <> ''", &[])
        .map_err(sql("recording hosts"))?;
    let rows =
        tx.query("SELECT id, local_host FROM runs WHERE host IS NULL", &[]).map_err(sql("reading hosts"))?;
    for row in rows {
        let (id, text) = (row.i64(0), row.text(1));
        let (id, text) = (id.map_err(sql("reading hosts"))?, text.map_err(sql("reading hosts"))?);
        let facts: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if let Some(host) = facts["hostname"].as_str().filter(|h| !h.is_empty()) {
            tx.execute("UPDATE runs SET host = ?1 WHERE id = ?2", args![host, id])
                .map_err(sql("recording hosts"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_random_version_4_uuids() {
        let (a, b) = (new_uid().unwrap(), new_uid().unwrap());
        assert_ne!(a, b);
        assert!(is_uid(&a) && is_uid(&b), "{a} {b}");
        assert_eq!(a.as_bytes()[14], b'4');
        assert!(!is_uid("12") && !is_uid("last") && !is_uid(&a.replace('-', "x")));
    }
}
