//! Runs whose process is gone. A run is stored `running` when it begins and gets its final
//! status when it ends; a process killed in between leaves it `running` for ever. Each run
//! records its [`Owner`] (pid, the pid's start time, boot id, host name), and the decision
//! below tells, from another process on the same host, whether that owner can still be
//! writing. The caller says whether a pid is alive: this crate never looks at processes.

use results::Owner;

use crate::db::{args, Sql};
use crate::{read::owner_of, sql, Result, Store};

/// Whether a run left `running` by `owner` is abandoned, judged by a process described by
/// `here` (only its boot id and host name are read) and `alive(pid, pid_start)`: on the same
/// host, either the host rebooted since (a different boot id) or the process is gone. A run
/// of another host, or one whose boot ids are unknown, cannot be judged and is not abandoned.
pub fn abandoned(owner: &Owner, here: &Owner, alive: impl Fn(u32, Option<u64>) -> bool) -> bool {
    if owner.hostname != here.hostname || owner.boot_id.is_empty() || here.boot_id.is_empty() {
        return false;
    }
    owner.boot_id != here.boot_id || !alive(owner.pid, owner.pid_start)
}

impl Store {
    /// Marks every `running` run that [`abandoned`] judges abandoned as `abandoned` for good,
    /// in one transaction, and returns their ids (ascending). Runs whose process is alive,
    /// runs of other hosts and runs without an owner are left alone.
    pub fn prune_abandoned(
        &mut self,
        here: &Owner,
        alive: impl Fn(u32, Option<u64>) -> bool,
    ) -> Result<Vec<i64>> {
        let mut tx = self.immediate()?;
        let running = tx
            .query(
                "SELECT id, owner_pid, owner_pid_start, owner_boot_id, owner_host FROM runs
                 WHERE status = 'running' ORDER BY id",
                &[],
            )
            .map_err(sql("finding running runs"))?;
        let mut marked = Vec::new();
        for row in running {
            let id = row.i64(0).map_err(sql("finding running runs"))?;
            let owner = owner_of(&row, 1).map_err(sql("finding running runs"))?;
            if owner.is_some_and(|o| abandoned(&o, here, &alive)) {
                tx.execute(
                    "UPDATE runs SET status = 'abandoned' WHERE id = ?1 AND status = 'running'",
                    args![id],
                )
                .map_err(sql("marking a run abandoned"))?;
                marked.push(id);
            }
        }
        tx.commit("marking runs abandoned")?;
        Ok(marked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(pid: u32, boot: &str, host: &str) -> Owner {
        Owner { pid, pid_start: Some(7), boot_id: boot.into(), hostname: host.into() }
    }

    #[test]
    fn gone_process_on_this_boot_is_abandoned_and_a_live_one_is_not() {
        let here = owner(1, "boot-a", "h");
        assert!(abandoned(&owner(42, "boot-a", "h"), &here, |_, _| false));
        assert!(!abandoned(&owner(42, "boot-a", "h"), &here, |pid, start| pid == 42 && start == Some(7)));
    }

    #[test]
    fn a_reboot_abandons_whatever_the_pid() {
        let here = owner(1, "boot-b", "h");
        assert!(abandoned(&owner(42, "boot-a", "h"), &here, |_, _| true));
    }

    #[test]
    fn other_hosts_and_unknown_boots_are_not_judged() {
        assert!(!abandoned(&owner(42, "boot-a", "other"), &owner(1, "boot-b", "h"), |_, _| false));
        assert!(!abandoned(&owner(42, "", "h"), &owner(1, "boot-a", "h"), |_, _| false));
        assert!(!abandoned(&owner(42, "boot-a", "h"), &owner(1, "", "h"), |_, _| false));
    }
}
