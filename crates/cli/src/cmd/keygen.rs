//! `tcplab keygen`: a new pre-shared key as one `key ID SECRET [class=CLASS]` line, for the
//! server's `--keys` file and the client's `--key-file`.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use engine::auth::keys;
use engine::auth::{KeyId, Secret};

use crate::args::serve::KeygenArgs;

/// Prints (or writes with mode 0600) a new key entry.
pub fn run(a: &KeygenArgs) -> Result<ExitCode> {
    let id = KeyId::new(&a.id).with_context(|| format!("--id '{}'", a.id))?;
    if let Some(class) = &a.class {
        if !keys::is_class_name(class) || class == engine::limits::ANONYMOUS {
            bail!("--class '{class}': letters, digits, . _ - (and not 'anonymous')");
        }
    }
    let bytes = netio::random_bytes::<32>().context("reading the OS random number generator")?;
    let secret = Secret::new(bytes.to_vec())?;
    let text = format!(
        "# tcplab pre-shared key '{id}': add this line to the server's --keys file, and give the file \
         to the client (--key-file)\n{}\n",
        keys::entry_line(&id, &secret, a.class.as_deref())
    );
    let Some(path) = &a.output else {
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    f.write_all(text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote key '{id}' to {} (mode 0600)", path.display());
    Ok(ExitCode::SUCCESS)
}
