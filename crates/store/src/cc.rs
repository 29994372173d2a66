//! A congestion-control comparison's figures (`compare-cc`): one JSON row per run in
//! `cc_studies`; the streams it compares are the run's ordinary `tests` rows.

use results::CcStudy;

use crate::db::{args, Sql};
use crate::{sql, Error, Result, Store};

impl Store {
    /// Records (or replaces) the comparison of run `run`.
    pub fn set_cc_study(&mut self, run: i64, study: &CcStudy) -> Result<()> {
        let text =
            serde_json::to_string(study).map_err(|reason| Error::Json { what: "cc study", run, reason })?;
        let mut tx = self.immediate()?;
        tx.execute(
            "INSERT INTO cc_studies (run_id, study) VALUES (?1, ?2)
             ON CONFLICT (run_id) DO UPDATE SET study = excluded.study",
            args![run, text],
        )
        .map_err(sql("recording a cc study"))?;
        tx.commit("recording a cc study")
    }

    /// The comparison of run `run`, if it is one.
    pub(crate) fn load_cc_study(&self, run: i64) -> Result<Option<CcStudy>> {
        let text = self
            .conn()
            .query_opt("SELECT study FROM cc_studies WHERE run_id = ?1", args![run])
            .and_then(|r| r.map(|r| r.text(0)).transpose())
            .map_err(sql("reading a cc study"))?;
        text.map(|t| serde_json::from_str(&t).map_err(|reason| Error::Json { what: "cc study", run, reason }))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use results::cc::{CcRun, MeanSd};
    use results::{HostInfo, RunRecord};

    use crate::{RunKind, Store};

    #[test]
    fn a_study_is_stored_with_its_run_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut st = Store::open(&dir.path().join("a.db")).unwrap();
        let command_line = vec!["tcplab".into(), "compare-cc".into()];
        let header = RunRecord { command_line, ..RunRecord::new("0", 1, HostInfo::default()) };
        let plain = st.begin_run(&header, RunKind::Test, "h:1").unwrap();
        let id = st.begin_run(&header, RunKind::CompareCc, "h:1").unwrap();
        let study = results::CcStudy {
            asked: vec!["cubic".into(), "highspeed".into()],
            unavailable: vec!["highspeed".into()],
            runs: vec![CcRun {
                congestion: "cubic".into(),
                throughput_bps: Some(MeanSd { mean: 9e8, sd: 1e7, n: 20 }),
                ..CcRun::default()
            }],
            ..results::CcStudy::default()
        };
        st.set_cc_study(id, &study).unwrap();
        assert_eq!(st.load_run(id).unwrap().cc, Some(study));
        assert_eq!(st.load_run(plain).unwrap().cc, None);
    }
}
